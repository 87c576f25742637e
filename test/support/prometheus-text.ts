/**
 * Reads Prometheus' text exposition format (what `GET /metrics` answers) into samples, so tests can ask for one
 * series' value by name and labels.
 */

/** One sample line: `name{label="value",…} 12`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of an exposition (comments and blank lines skipped); throws on a line it cannot read. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (match === null) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? "").matchAll(LABEL)) {
      labels[name as string] = (value as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none match). */
export function sumOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const sample of samples) {
    if (sample.name !== name) continue;
    if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) total += sample.value;
  }
  return total;
}

/** Whether any sample named `name` exists. */
export function hasSeries(samples: readonly Sample[], name: string): boolean {
  return samples.some((sample) => sample.name === name);
}
