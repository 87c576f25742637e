import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { parseExposition } from "../../../test/support/prometheus-text.js";
import type { Series } from "./request-tally.js";
import { createTtftHistogram, escapeLabelValue } from "./ttft-histogram.js";

const series = (surface: string, model: string, key: string): Series => ({
  surface,
  model,
  key,
  requests: new Map(),
  tokens: [0, 0, 0, 0, 0],
});

const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const OBSERVED: ReadonlyArray<[number, number]> = [
  [0, 0.005],
  [0, 0.0049],
  [0, 0.04],
  [1, 0.5],
  [1, 61],
  [2, 0.01],
  [2, 0.010000001],
];

describe("TTFT histogram", () => {
  it("writes what prom-client's Histogram writes for the same observations", async () => {
    const all = [
      series("chat", "gpt-5", ""),
      series("messages", 'a "quoted" \\ model', "team\nkey"),
      series("chat", "o", "k"),
    ];
    const ours = createTtftHistogram("ttft_seconds", "Time to the first token.", BOUNDS);
    const registry = new Registry();
    const theirs = new Histogram({
      name: "ttft_seconds",
      help: "Time to the first token.",
      labelNames: ["surface", "model", "key"] as const,
      buckets: BOUNDS,
      registers: [registry],
    });
    for (const [index, seconds] of OBSERVED) {
      const s = all[index] as Series;
      ours.observe(s, seconds);
      theirs.observe({ surface: s.surface, model: s.model, key: s.key }, seconds);
    }
    const text = ours.exposition(all);
    const order = (samples: ReturnType<typeof parseExposition>) =>
      samples.map((s) => JSON.stringify([s.name, Object.entries(s.labels).sort(), s.value])).sort();
    expect(order(parseExposition(text))).toEqual(order(parseExposition(await registry.metrics())));
    expect(text.startsWith("# HELP ttft_seconds Time to the first token.\n# TYPE ttft_seconds histogram\n")).toBe(true);
    // A value on a bound counts in that bucket (le = "less than or equal").
    expect(text).toContain('ttft_seconds_bucket{le="0.005",surface="chat",model="gpt-5",key=""} 2\n');
    expect(text).toContain(
      'ttft_seconds_bucket{le="+Inf",surface="messages",model="a \\"quoted\\" \\\\ model",key="team\\nkey"} 2\n',
    );
  });

  it("writes only the header before any observation, and skips series without one", () => {
    const histogram = createTtftHistogram("h", "help", [1]);
    expect(histogram.exposition([series("chat", "m", "")])).toBe("# HELP h help\n# TYPE h histogram\n");
  });

  it("escapes backslashes, double quotes and line feeds in label values, and nothing else", () => {
    expect(escapeLabelValue("plain é ✓")).toBe("plain é ✓");
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
  });
});
