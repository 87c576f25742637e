/**
 * The time-to-first-token histogram of /metrics, kept as plain numbers per request series (request-tally.ts) and
 * written in Prometheus' text exposition format when scraped. Observing costs a bucket search and three additions,
 * and needs no metrics library: prom-client, which writes every other family, is loaded on the first scrape only
 * (gateway-metrics.ts), and a histogram, unlike a counter or a gauge, cannot be set from a tally when scraped.
 */
import type { Series } from "./request-tally.js";

/** A label value escaped for the exposition format (backslash, double quote and line feed). */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`)) : value;
}

/** A sample value as the exposition format writes it. */
function sampleValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/** A histogram family over request series, with upper bounds `bounds` (seconds, ascending). */
export interface TtftHistogram {
  /** Counts one observation (seconds) in `series`. */
  observe(series: Series, seconds: number): void;
  /** The family in the text exposition format: HELP, TYPE, then each observed series' buckets, sum and count. */
  exposition(series: Iterable<Series>): string;
}

/** Creates the histogram `name` with `help` and the bucket upper bounds `bounds` (ascending). */
export function createTtftHistogram(name: string, help: string, bounds: readonly number[]): TtftHistogram {
  const les = [...bounds.map((bound) => sampleValue(bound)), "+Inf"];
  const header = `# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${name} histogram\n`;
  return {
    observe(series, seconds) {
      let tally = series.ttft;
      if (tally === undefined) {
        tally = { buckets: les.map(() => 0), sum: 0, count: 0 };
        series.ttft = tally;
      }
      let index = 0;
      while (index < bounds.length && seconds > (bounds[index] as number)) index++;
      tally.buckets[index] = (tally.buckets[index] ?? 0) + 1;
      tally.sum += seconds;
      tally.count++;
    },
    exposition(all) {
      let text = header;
      for (const series of all) {
        const tally = series.ttft;
        if (tally === undefined) continue;
        const labels = `surface="${escapeLabelValue(series.surface)}",model="${escapeLabelValue(series.model)}",key="${escapeLabelValue(series.key)}"`;
        let cumulative = 0;
        for (let i = 0; i < les.length; i++) {
          cumulative += tally.buckets[i] ?? 0;
          text += `${name}_bucket{le="${les[i]}",${labels}} ${cumulative}\n`;
        }
        text += `${name}_sum{${labels}} ${sampleValue(tally.sum)}\n${name}_count{${labels}} ${tally.count}\n`;
      }
      return text;
    },
  };
}
