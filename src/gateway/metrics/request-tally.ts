/**
 * The request-side metrics of /metrics, kept as plain numbers so counting a request costs a few map lookups and
 * additions (prom-client's labelled inc hashes the label set on every call, ~1–3 µs each on a busy machine), and so
 * that no metrics library loads before the first scrape. The registry's counters read the tally when scraped
 * (gateway-metrics.ts); the TTFT histogram's observations sit in each series too (ttft-histogram.ts).
 */
import type { RequestDone } from "../../surfaces/kit/access-log.js";

/** Distinct `model` label values kept before the rest count as `other`. */
export const MAX_MODELS = 100;
const MAX_LABEL_CHARS = 100;

/** The token kinds of `cursor_bridge_tokens_total` (`cached` and `cache_write` are part of `input`, `reasoning` of `output`). */
export const TOKEN_TYPES = ["input", "output", "cached", "cache_write", "reasoning"] as const;

/** Upstream turn routes. */
export const ROUTES = ["new", "continued", "resumed", "replayed"] as const;

/** A label value cut to 100 characters. */
export const clampLabel = (value: string): string =>
  value.length > MAX_LABEL_CHARS ? value.slice(0, MAX_LABEL_CHARS) : value;

/** What was counted for one (surface, model, key). */
export interface Series {
  readonly surface: string;
  readonly model: string;
  readonly key: string;
  /** HTTP status → requests. */
  readonly requests: Map<number, number>;
  /** Indexed like TOKEN_TYPES. */
  readonly tokens: number[];
  /** Time-to-first-token observations, from the first one on (ttft-histogram.ts). */
  ttft?: HistogramTally;
}

/** One series' histogram observations: per-bucket counts (not cumulative; the last is above every bound), sum, count. */
export interface HistogramTally {
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** The tally of every request. */
export interface RequestTally {
  /** Counts an API request and returns its series; other requests are not counted (undefined). */
  add(done: RequestDone): Series | undefined;
  /** Every series counted so far. */
  series(): Iterable<Series>;
  /** Turns by route. */
  readonly runs: Record<(typeof ROUTES)[number], number>;
  /** surface → error code → failed requests. */
  readonly errors: Map<string, Map<string, number>>;
}

/** Creates an empty tally. */
export function createRequestTally(): RequestTally {
  // surface → model → key → series: nested maps, so counting a request builds no lookup string.
  const bySurface = new Map<string, Map<string, Map<string, Series>>>();
  const all: Series[] = [];
  const models = new Set<string>();
  const runs = { new: 0, continued: 0, resumed: 0, replayed: 0 };
  const errors = new Map<string, Map<string, number>>();

  const modelLabel = (model: string | undefined): string => {
    if (model === undefined) return "";
    if (models.has(model)) return model;
    const label = clampLabel(model);
    if (models.has(label)) return label;
    if (models.size >= MAX_MODELS) return "other";
    models.add(label);
    return label;
  };
  const seriesOf = (surface: string, rawModel: string | undefined, rawKey: string): Series => {
    let byModel = bySurface.get(surface);
    if (byModel === undefined) {
      byModel = new Map();
      bySurface.set(surface, byModel);
    }
    const model = modelLabel(rawModel);
    let byKey = byModel.get(model);
    if (byKey === undefined) {
      byKey = new Map();
      byModel.set(model, byKey);
    }
    let series = byKey.get(rawKey);
    if (series === undefined) {
      series = {
        surface,
        model,
        key: clampLabel(rawKey),
        requests: new Map(),
        tokens: TOKEN_TYPES.map(() => 0),
      };
      byKey.set(rawKey, series);
      all.push(series);
    }
    return series;
  };

  return {
    runs,
    errors,
    series: () => all,
    add(done) {
      if (!done.api) return undefined;
      const { log, surface } = done;
      const series = seriesOf(surface, log.model, done.principal?.keyName ?? "");
      series.requests.set(done.status, (series.requests.get(done.status) ?? 0) + 1);
      const usage = log.usage;
      if (usage !== undefined) {
        const tokens = series.tokens;
        tokens[0] = (tokens[0] ?? 0) + usage.inputTokens;
        tokens[1] = (tokens[1] ?? 0) + usage.outputTokens;
        tokens[2] = (tokens[2] ?? 0) + (usage.cacheReadTokens ?? 0);
        tokens[3] = (tokens[3] ?? 0) + (usage.cacheWriteTokens ?? 0);
        tokens[4] = (tokens[4] ?? 0) + (usage.reasoningTokens ?? 0);
      }
      if (log.route !== undefined) runs[log.route]++;
      if (done.failure !== undefined) {
        const code = done.failure.error.code;
        let byCode = errors.get(surface);
        if (byCode === undefined) {
          byCode = new Map();
          errors.set(surface, byCode);
        }
        byCode.set(code, (byCode.get(code) ?? 0) + 1);
      }
      return series;
    },
  };
}
