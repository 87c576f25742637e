/**
 * The bench's target arithmetic (bench/targets.ts and the scenario reports that use it): a target held against a
 * floor of the same run is bound by the floor's median plus (or minus, or times) its margin, met only when the worst
 * repetition meets it, paired per repetition where the floor was measured beside each one, and MISSED whenever its
 * floor was not measured. Pure functions on made-up figures; nothing here runs the bench.
 */
import { describe, expect, it } from "vitest";
import type { ThroughputRep, ThroughputResult, ThroughputSide } from "../../bench/capacity.js";
import { cpuUsPerTurn, throughputReport } from "../../bench/capacity.js";
import type { HopFloorResult, RelayFloor } from "../../bench/hop-floor.js";
import { latencyReport } from "../../bench/latency.js";
import { compareSides, type OverheadResult, type OverheadSide } from "../../bench/overhead.js";
import { parkedMemoryReport } from "../../bench/parked-memory.js";
import { performanceTable } from "../../bench/performance-table.js";
import { renderReport, type Spread, spreadOf, type TargetResult } from "../../bench/report.js";
import { type StartupResult, startupReport } from "../../bench/startup.js";
import {
  floorMeasured,
  floorTarget,
  minus,
  plus,
  QUICK_RUN_TARGET_S,
  quickRunTarget,
  RETIRED_TARGETS,
  retiredMatch,
  times,
} from "../../bench/targets.js";
import { type ToolTripVariant, toolTripReport } from "../../bench/tool-trips.js";

const s = (...values: number[]): Spread => spreadOf(values);

describe("floorTarget", () => {
  const base = { scenario: "x", target: "y" };

  it("bounds by the floor's median plus the margin and is met only when the worst repetition is within it", () => {
    const floor = { name: "relay", spread: s(1.5, 1.75, 2.5), unit: " ms" };
    const met = floorTarget({ ...base, measured: s(1.8, 1.9, 2.0), floor, bound: { atMost: plus(0.25) } });
    expect(met.met).toBe(true);
    expect(met.floor).toContain("relay 1.75 (1.50–2.50) ms");
    expect(met.floor).toContain("bound ≤ 2.00");
    expect(met.measured).toContain("worst 2.00 over 3 reps");
    // The median (1.9) is within 2.0, the worst repetition (2.01) is not.
    const missed = floorTarget({ ...base, measured: s(1.8, 1.9, 2.01), floor, bound: { atMost: plus(0.25) } });
    expect(missed.met).toBe(false);
    expect(missed.measured).toContain("worst 2.01");
  });

  it("for an at-least bound the worst repetition is the lowest", () => {
    const floor = { name: "HTTP/2 relay", spread: s(0.96, 0.87, 1.06), prefix: "×" };
    const at = (...v: number[]) => floorTarget({ ...base, measured: s(...v), floor, bound: { atLeast: minus(0.03) } });
    expect(at(0.95, 0.93, 0.99).met).toBe(true); // bound 0.93
    expect(at(0.99, 0.92, 1.2).met).toBe(false);
    expect(at(0.99, 0.92, 1.2).measured).toContain("worst 0.92");
    expect(at(0.95, 0.93, 0.99).floor).toContain("×0.96 (0.87–1.06)");
  });

  it("a floor that was not measured makes the target MISSED and says so, whatever was measured", () => {
    for (const spread of [undefined, s(), s(Number.NaN)]) {
      const t = floorTarget({
        ...base,
        measured: s(0.1, 0.1),
        floor: { name: "HTTP/2 relay", spread },
        bound: { atMost: plus(100) },
      });
      expect(t.met).toBe(false);
      expect(t.floor).toBe("HTTP/2 relay: NOT MEASURED in this run");
      expect(t.measured).toContain("its floor was not measured");
    }
  });

  it("a measured value that is not a number is missed, never met", () => {
    const t = floorTarget({
      ...base,
      measured: s(1, Number.NaN),
      floor: { name: "f", spread: s(10) },
      bound: { atMost: plus(1) },
    });
    expect(t.met).toBe(false);
  });

  it("paired: each repetition is held against the floor measured beside it", () => {
    const floor = { name: "Hono", spread: s(190, 250, 200), unit: " ms", digits: 0 };
    const paired = (...v: number[]) =>
      floorTarget({ ...base, measured: s(...v), floor, bound: { atMost: plus(100) }, paired: true, digits: 0 });
    // 340 would miss the unpaired bound (median 200 + 100) but its own repetition's floor was 250.
    expect(paired(280, 340, 300).met).toBe(true);
    const missed = paired(291, 340, 300);
    expect(missed.met).toBe(false);
    expect(missed.measured).toContain("worst 291 against its bound 290");
    expect(missed.floor).toContain("paired per repetition");
    // A floor with fewer repetitions than the measurement cannot be paired: not measured.
    expect(
      floorTarget({ ...base, measured: s(1, 2), floor: { name: "f", spread: s(1) }, bound: { atMost: plus(9) } }).met,
    ).toBe(true);
    expect(floorMeasured({ name: "f", spread: s(1) }, s(1, 2))).toBe(false);
    expect(paired(1, 1).met).toBe(false);
  });

  it("times scales the floor", () => {
    const t = floorTarget({
      ...base,
      measured: s(2300, 2400),
      floor: { name: "direct", spread: s(2000, 2000) },
      bound: { atMost: times(1.2) },
    });
    expect(t.met).toBe(true);
    expect(
      floorTarget({
        ...base,
        measured: s(2300, 2401),
        floor: { name: "direct", spread: s(2000, 2000) },
        bound: { atMost: times(1.2) },
      }).met,
    ).toBe(false);
  });
});

describe("quickRunTarget", () => {
  it("is met at or under 150 s, quotes its CPU floor, and is missed when the wall time was not read", () => {
    expect(QUICK_RUN_TARGET_S).toBe(150);
    const met = quickRunTarget(150, 170, 2);
    expect(met.met).toBe(true);
    expect(met.floor).toContain("170 CPU s ÷ 2 = 85 s");
    expect(quickRunTarget(150.1, 170, 2).met).toBe(false);
    expect(quickRunTarget(undefined, 170, 2).met).toBe(false);
    expect(quickRunTarget(Number.NaN, 170, 2).met).toBe(false);
  });
});

describe("the printed report and the docs table", () => {
  const target: TargetResult = { scenario: "s", target: "t ≤ f + 1", floor: "f 2.00", measured: "2.50", met: true };

  it("prints every target with its floor and lists the retired ones with the reason", () => {
    const fixed: TargetResult = { scenario: "s", target: "0 errors", measured: "0", met: true };
    const text = renderReport([], [target, fixed], RETIRED_TARGETS);
    expect(text).toContain("s: t ≤ f + 1 — floor: f 2.00 — measured 2.50 — met");
    expect(text).toContain("s: 0 errors — floor: none, a fixed bound — measured 0 — met");
    expect(text).toContain("## Retired targets");
    for (const r of RETIRED_TARGETS) expect(text).toContain(`${r.was} — retired: ${r.reason}; now: ${r.now}`);
  });

  it("retires the absolute TTFT, the 40 KB per parked turn and the 140 ms start", () => {
    expect(retiredMatch("1. TTFT: added at 1 stream ≤ 1 ms p50")).toBeDefined();
    expect(retiredMatch("4. parked memory: ≤ 40 KB raw RSS per conversation at 200 parked")).toBeDefined();
    expect(
      retiredMatch("startup: node bin/cursor-bridge.js serve → first /health 200 ≤ 140 ms median (logged in)"),
    ).toBeDefined();
    expect(retiredMatch("1. TTFT: bridge ÷ direct p99 ≤ 1.5 at 1,000 streams")).toBeUndefined();
  });

  const record = {
    mode: "full",
    only: "all",
    date: "2026-11-27T00:00:00.000Z",
    node: "v20",
    cpus: 2,
    durationMs: 1000,
    loadAverage: { before: [1, 1, 1], after: [1, 1, 1] },
  };

  it("the table has target, floor, measured and result columns, then the retired targets", () => {
    const table = performanceTable({
      ...record,
      targets: [target, { scenario: "s", target: "fixed", measured: "2.50", met: false }],
      retiredTargets: [...RETIRED_TARGETS],
    });
    expect(table).toContain("| s: t ≤ f + 1 | f 2.00 | 2.50 | met |");
    expect(table).toContain("| s: fixed | none, a fixed bound | 2.50 | **MISSED** |");
    expect(table).toContain("| Retired target | Why | Now |");
    expect(table).not.toContain("predates");
  });

  it("renders an older record honestly: its retired lines marked, no invented floors", () => {
    const table = performanceTable({
      ...record,
      targets: [
        { scenario: "1. TTFT", target: "added at 1 stream ≤ 1 ms p50", measured: "2.22", met: false },
        { scenario: "8. soak", target: "no errors", measured: "0", met: true },
      ],
    });
    expect(table).toContain("This record predates the targets held against floors");
    expect(table).toContain("| 1. TTFT: added at 1 stream ≤ 1 ms p50 (retired) | — | 2.22 | **MISSED** |");
    expect(table).toContain("| 8. soak: no errors | — | 0 | met |");
  });
});

/** One latency case with the given per-repetition figures (other metrics copied). */
function overhead(label: string, concurrency: number, m: { added?: Spread; ratio?: Spread }): OverheadResult {
  const any = s(1, 1);
  const metrics = (x: Spread) => ({ ttftP50: x, ttftP99: x, totalP50: x, totalP99: x });
  return {
    label,
    concurrency,
    stream: true,
    repetitions: 2,
    samplesPerRepetition: 10,
    baselineName: "direct",
    candidateName: "bridge",
    baseline: metrics(any),
    candidate: metrics(any),
    ratio: metrics(m.ratio ?? any),
    added: metrics(m.added ?? any),
    errors: { baseline: 0, candidate: 0 },
    loadAverage: { before: [0, 0, 0], after: [0, 0, 0] },
  };
}

function relay(kind: "tcp" | "h2", latency: OverheadResult[], throughputRatio?: Spread): RelayFloor {
  return {
    kind,
    latency,
    throughput: {
      streams: 200,
      tokens: 100,
      repetitions: throughputRatio === undefined ? 0 : throughputRatio.values.length,
      direct: [],
      relay: [],
      ratio: throughputRatio ?? s(),
    },
  };
}

describe("scenario 1's targets against the HTTP/2 relay", () => {
  const results = [
    overhead("1 stream", 1, { added: s(1.9, 1.95) }),
    overhead("200 streams", 200, { ratio: s(1.3, 1.43) }),
    overhead("1,000 streams", 1000, { ratio: s(1.2, 1.4) }),
  ];
  const floor: HopFloorResult = {
    relays: [
      relay("h2", [overhead("1 stream", 1, { added: s(1.7, 1.7) }), overhead("200 streams", 200, { ratio: s(1.34) })]),
    ],
  };

  it("1 stream ≤ relay + 0.3 ms, 200 streams ≤ relay ratio + 0.10, 1,000 streams p99 ≤ 1.5; each prints its floor", () => {
    const { targets } = latencyReport(results, floor);
    expect(targets.map((t) => [t.target, t.met])).toEqual([
      ["added at 1 stream ≤ HTTP/2 relay floor + 0.3 ms p50", true],
      ["bridge ÷ direct p50 ≤ HTTP/2 relay ratio + 0.10 at 200 streams", true],
      ["0 failed requests through one serve", true],
      ["bridge ÷ direct p99 ≤ 1.5 at 1,000 streams", true],
    ]);
    for (const t of targets) expect(t.floor).toBeDefined();
    expect(targets[0]?.floor).toContain("HTTP/2 relay adds +1.70");
  });

  it("without the relay, the relative targets are MISSED and say their floor was not measured", () => {
    const { targets } = latencyReport(results);
    const relative = targets.filter((t) => t.target.includes("HTTP/2 relay"));
    expect(relative).toHaveLength(2);
    for (const t of relative) {
      expect(t.met).toBe(false);
      expect(t.floor).toContain("NOT MEASURED");
    }
  });
});

describe("scenario 1's targets against the HTTP/2 relay run in the same rounds", () => {
  const metrics = (x: Spread) => ({ ttftP50: x, ttftP99: x, totalP50: x, totalP99: x });
  const withFloor = (r: OverheadResult, added: Spread, ratio: Spread): OverheadResult => ({
    ...r,
    floor: { name: "HTTP/2 relay", added: metrics(added), ratio: metrics(ratio), errors: 0 },
  });
  // The hop floor measured on its own says the opposite of the paired one in both cases: the paired one is used.
  const hopFloor: HopFloorResult = {
    relays: [
      relay("h2", [overhead("1 stream", 1, { added: s(0.1, 0.1) }), overhead("200 streams", 200, { ratio: s(2) })]),
    ],
  };

  it("holds each repetition against the relay of its own rounds", () => {
    const results = [
      withFloor(overhead("1 stream", 1, { added: s(1.2, 1.9) }), s(1.0, 1.7), s(1)),
      withFloor(overhead("200 streams", 200, { ratio: s(1.1, 1.5) }), s(0), s(1.05, 1.45)),
    ];
    const [one, c200] = latencyReport(results, hopFloor).targets;
    // 1.2 ≤ 1.0 + 0.3 and 1.9 ≤ 1.7 + 0.3; 1.1 ≤ 1.05 + 0.1 and 1.5 ≤ 1.45 + 0.1.
    expect([one?.met, c200?.met]).toEqual([true, true]);
    expect(one?.floor).toContain("HTTP/2 relay adds in the same rounds +1.35 (1.00–1.70) ms, paired per repetition");
    expect(c200?.floor).toContain("paired per repetition");
    // One repetition over its own bound is MISSED, however the other repetitions and the medians compare.
    const missed = latencyReport([withFloor(overhead("1 stream", 1, { added: s(1.2, 1.31) }), s(1.7, 1.0), s(1))]);
    expect(missed.targets[0]?.met).toBe(false);
    expect(missed.targets[0]?.measured).toContain("worst 1.31 ms against its bound 1.30 ms");
  });
});

describe("compareSides with a floor side", () => {
  const fixed = (name: string, ttft: number, order: string[]): OverheadSide => ({
    name,
    request: async () => {
      order.push(name);
      return { ttft, total: ttft * 10 };
    },
  });
  it("runs the three sides in every round, rotating the first, and pairs the floor with the baseline", async () => {
    const order: string[] = [];
    const c = { label: "1 stream", concurrency: 1, stream: true, prompt: "p", rounds: 3, repetitions: 2 };
    const r = await compareSides(fixed("direct", 2, order), fixed("bridge", 3.5, order), c, fixed("relay", 3, order));
    expect(order.slice(0, 9)).toEqual([
      ...["direct", "bridge", "relay"],
      ...["bridge", "relay", "direct"],
      ...["relay", "direct", "bridge"],
    ]);
    expect(order).toHaveLength(18);
    expect(r.added.ttftP50.values).toEqual([1.5, 1.5]);
    expect(r.floor?.added.ttftP50.values).toEqual([1, 1]);
    expect(r.floor?.ratio.ttftP50.values).toEqual([1.5, 1.5]);
    const without = await compareSides(fixed("direct", 2, []), fixed("bridge", 3.5, []), c);
    expect(without.floor).toBeUndefined();
    // A concurrent case first runs one unmeasured round per side at its concurrency.
    const calls: string[] = [];
    const two = { ...c, concurrency: 2, rounds: 1, repetitions: 1 };
    await compareSides(fixed("direct", 2, calls), fixed("bridge", 3.5, calls), two, fixed("relay", 3, calls));
    expect(calls).toEqual([
      ...["direct", "direct", "bridge", "bridge", "relay", "relay"],
      ...["direct", "direct", "bridge", "bridge", "relay", "relay"],
    ]);
  });
});

describe("scenario 5's targets", () => {
  const side = (cpuMs: number, chunksPerSecond: number): ThroughputSide => ({
    chunks: 2000,
    wallMs: 1000,
    chunksPerSecond,
    cpuMs,
    loadGeneratorCpuMs: 0,
    emulatorCpuMs: 0,
  });
  const rep = (shortCpuMs: number): ThroughputRep => ({
    short: side(shortCpuMs, 1000),
    long: side(shortCpuMs * 3, 1000),
    cpuUsPerChunk: 50,
    cpuUsPerRequest: 1000,
  });
  const result = (bridgeShortCpuMs: number[]): ThroughputResult => ({
    streams: 200,
    tokens: { short: 10, long: 100 },
    repetitions: 2,
    direct: [rep(400), rep(500)],
    bridge: bridgeShortCpuMs.map(rep),
    throughputRatio: s(0.95, 0.94),
    cpuPerChunkRatio: s(0.8, 0.9),
    cpuPerRequestRatio: s(1, 1),
    cpuLongRatio: s(1, 1),
  });
  const floor: HopFloorResult = { relays: [relay("h2", [], s(0.96, 0.97))] };

  it("CPU per request: the whole turn within 1.2× the direct client's, repetition by repetition", () => {
    // direct whole turn: 400 ms ÷ 200 = 2000 µs and 2500 µs; bound 2400 and 3000 µs.
    const met = throughputReport(result([480, 600]), floor).targets.find((t) => t.scenario === "5. CPU per request");
    expect(met?.met).toBe(true);
    expect(met?.floor).toContain("the direct client's whole turn 2250 (2000–2500) µs");
    const missed = throughputReport(result([481, 500]), floor).targets.find((t) => t.scenario === "5. CPU per request");
    expect(missed?.met).toBe(false);
  });

  it("CPU per request divides a reading by the requests it spans (several bursts), one burst in older records", () => {
    const over = (requests: number | undefined): ThroughputRep => ({
      ...rep(400),
      short: { ...side(1000, 1000), ...(requests === undefined ? {} : { requests }) },
    });
    expect(cpuUsPerTurn(over(1000), 200)).toBe(1000); // 1,000 ms over 5 bursts of 200
    expect(cpuUsPerTurn(over(undefined), 200)).toBe(5000); // a record of one burst: its 200 streams
  });

  it("CPU per request quotes the HTTP/2 relay process's own CPU per turn beside its floor when it was measured", () => {
    const cpuTarget = (f: HopFloorResult) =>
      throughputReport(result([480, 600]), f).targets.find((t) => t.scenario === "5. CPU per request");
    const measured = relay("h2", [], s(0.96, 0.97));
    measured.throughput.relayCpuUsPerTurn = [250, 300];
    expect(cpuTarget({ relays: [measured] })?.measured).toContain(
      "HTTP/2 relay process's own CPU per turn 275 (250–300) µs",
    );
    expect(cpuTarget(floor)?.measured).not.toContain("relay process");
  });

  it("throughput and the relay's CPU: the relay run in the same repetitions is the floor, paired", () => {
    const paired = (ratio: number[]) => ({
      ...result([400, 500]),
      relay: { chunksPerSecond: [900, 900], ratio: s(...ratio), cpuUsPerTurn: [200, 220] },
    });
    // Unpaired against the hop floor's median 0.98 (bound 0.95), 0.94 would miss; each against its own relay meets.
    const at = (t: ThroughputResult) => throughputReport(t, { relays: [relay("h2", [], s(0.98, 0.98))] }).targets;
    const met = at(paired([0.96, 0.95]));
    expect(met.find((t) => t.scenario === "5. throughput")?.met).toBe(true); // 0.95 ≥ 0.93, 0.94 ≥ 0.92
    expect(met.find((t) => t.scenario === "5. throughput")?.floor).toContain("in the same repetitions");
    expect(met.find((t) => t.scenario === "5. CPU per request")?.measured).toContain("CPU per turn 210 (200–220) µs");
    expect(at(paired([0.96, 0.98])).find((t) => t.scenario === "5. throughput")?.met).toBe(false); // 0.94 < 0.95
  });

  it("throughput ≥ relay ratio − 0.03 on the worst repetition, MISSED without the relay", () => {
    const at = (f?: HopFloorResult) =>
      throughputReport(result([400, 500]), f).targets.find((t) => t.scenario === "5. throughput");
    expect(at(floor)?.met).toBe(true); // bound 0.965 − 0.03 = 0.935 ≤ 0.94
    expect(at({ relays: [relay("h2", [], s(0.98, 0.98))] })?.met).toBe(false); // bound 0.95 > 0.94
    expect(at()?.met).toBe(false);
    expect(at()?.floor).toContain("NOT MEASURED");
  });
});

describe("scenario 4's targets", () => {
  const memory = (direct: number) => ({
    counts: [
      {
        parked: 200,
        rawRssBytesPerConversation: 100 * 1024,
        floorRssBytesPerConversation: 0,
        floorHeapBytesPerConversation: 0,
        directRawRssBytesPerConversation: direct,
      },
    ],
    rawBaselineMb: 0,
    floorBaselineMb: 0,
    directBaselineMb: 0,
  });

  it("raw RSS per conversation ≤ the direct client's per Run held; MISSED when the holder was not measured", () => {
    expect(parkedMemoryReport(memory(100 * 1024)).targets[0]?.met).toBe(true);
    // Both sides' young generations, at their baselines and at the count, stand in the target line beside the figures.
    const base = memory(100 * 1024);
    const young = {
      ...base,
      counts: base.counts.map((c) => ({
        ...c,
        serveYoungGenerationBytes: 32 * 2 ** 20,
        directYoungGenerationBytes: 32 * 2 ** 20,
      })),
      serveYoungBaselineMb: 8,
      directYoungBaselineMb: 16,
    };
    expect(parkedMemoryReport(young).targets[0]?.measured).toContain(
      "young generation serve 8 → 32 MB, direct 16 → 32 MB",
    );
    expect(parkedMemoryReport(memory(99 * 1024)).targets[0]?.met).toBe(false);
    const missing = parkedMemoryReport(memory(Number.NaN)).targets[0];
    expect(missing?.met).toBe(false);
    expect(missing?.floor).toContain("NOT MEASURED");
  });

  it("with repetitions, holds each raw serve against the direct client of its own pair, and shows resident sizes", () => {
    const mb = 2 ** 20;
    const young = (committed: number, resident: number) => ({ committed: committed * mb, resident: resident * mb });
    const withPairs = (raw: number[], direct: number[]) => ({
      ...memory(0),
      counts: [
        {
          parked: 200,
          floorRssBytesPerConversation: Number.NaN,
          floorHeapBytesPerConversation: Number.NaN,
          rawRssBytesPerConversation: spreadOf(raw).median * 1024,
          directRawRssBytesPerConversation: spreadOf(direct).median * 1024,
          rawRssBytesPerConversationByRepetition: raw.map((v) => v * 1024),
          directRawRssBytesPerConversationByRepetition: direct.map((v) => v * 1024),
          serveYoungGenerationBytes: 32 * mb,
          directYoungGenerationBytes: 32 * mb,
          serveYoung: raw.map(() => young(32, 32)),
          directYoung: direct.map(() => young(32, 31)),
        },
      ],
      serveYoungBaseline: raw.map(() => young(16, 16)),
      directYoungBaseline: direct.map(() => young(16, 15)),
      repetitions: raw.length,
      warmUp: 100,
    });
    const met = parkedMemoryReport(withPairs([130, 135, 128], [140, 136, 131])).targets[0];
    expect(met?.met).toBe(true);
    expect(met?.floor).toContain("paired per repetition");
    expect(met?.measured).toContain("young generation serve 16 (16 resident) → 32 (32), 16 (16 resident) → 32 (32)");
    expect(met?.measured).toContain("direct 16 (15 resident) → 32 (31)");
    // The medians (130 against 136) meet it, the second pair (135 against 134) does not.
    const missed = parkedMemoryReport(withPairs([130, 135, 128], [140, 134, 131])).targets[0];
    expect(missed?.met).toBe(false);
    const table = parkedMemoryReport(withPairs([130, 135, 128], [140, 136, 131])).table;
    expect(table.rows[0]?.[1]).toBe("130.0 (128.0–135.0)");
    expect(table.notes?.join("\n")).toContain("after 100 warm-up conversations");
    // A record since the warm-up went on until the young generation was full says how many each side parked.
    const notes = parkedMemoryReport({
      ...withPairs([130, 135, 128], [140, 136, 131]),
      warmUps: { raw: [600, 300, 300], direct: [300, 300, 200], floor: 250 },
    }).table.notes?.join("\n");
    expect(notes).toContain("after the warm-up");
    expect(notes).toContain("raw 600, 300, 300; direct 300, 300, 200; post-GC 250");
    // The quick run has no post-GC serve: its count is NaN in the run, null in the JSON record, and left out.
    const quick = parkedMemoryReport({
      ...withPairs([130], [140]),
      warmUps: { raw: [300], direct: [200], floor: null as unknown as number },
    }).table.notes?.join("\n");
    expect(quick).toContain("raw 300; direct 200. ");
  });
});

describe("the start targets", () => {
  const startup = (bin: number[], chat: number[], hono: number[] | undefined): StartupResult => ({
    repetitions: bin.length,
    perRepetition: 1,
    kinds: {
      ...(hono === undefined ? {} : { bareHono: { label: "hono", line: s(...hono), health: s(...hono) } }),
      bin: { label: "bin", line: s(...bin), health: s(...bin), chat: s(...chat) },
    },
    npmOverFloor: s(100, 120),
  });

  it("first /health 200 and first chat answer each ≤ the bare Hono app's first 200 + 100 ms, paired", () => {
    const targets = startupReport(startup([280, 300], [285, 305], [190, 210])).targets;
    const serve = targets.filter((t) => t.target.startsWith("node bin"));
    expect(serve.map((t) => [t.target, t.met])).toEqual([
      ["node bin/cursor-bridge.js serve → first /health 200 ≤ bare Hono floor + 100 ms (embedded emulator)", true],
      [
        "node bin/cursor-bridge.js serve → first completed chat answer ≤ bare Hono floor + 100 ms (embedded emulator)",
        true,
      ],
    ]);
    // The chat answer of the first repetition (295) is past that repetition's Hono floor + 100 (290).
    const late = startupReport(startup([280, 300], [295, 305], [190, 250])).targets;
    expect(late.find((t) => t.target.includes("chat"))?.met).toBe(false);
    const noFloor = startupReport(startup([1, 1], [1, 1], undefined)).targets.filter((t) =>
      t.target.startsWith("node bin"),
    );
    for (const t of noFloor) expect([t.met, t.floor?.includes("NOT MEASURED")]).toEqual([false, true]);
  });
});

describe("scenario 2b's targets", () => {
  const variant = (name: string, callCountSeen: boolean, bridge: number[], direct: number[]): ToolTripVariant => ({
    name,
    callCountSeen,
    bridgeMs: spreadOf(bridge),
    directMs: spreadOf(direct),
    ratio: spreadOf(bridge.map((b, i) => b / (direct[i] as number))),
  });
  const report = (without: ToolTripVariant) =>
    toolTripReport({
      toolCalls: 10,
      repetitions: 2,
      bootstrapLatencyMs: 0,
      variants: [variant("call_count sent", true, [1100, 1050], [1000, 1000]), without],
    }).targets;

  it("holds call_count sent at 1.1× as measured, and call_count not sent at 1.1× after the window each trip waits", () => {
    const [sent, notSent] = report(variant("call_count not sent", false, [1480, 1500], [1000, 1000]));
    expect(sent?.met).toBe(true);
    expect(sent?.target).toBe("10 round trips ≤ 1.1× the direct client's time, call_count sent");
    // 1500 − 10 × 40 = 1100: exactly 1.1× on the worst repetition; the raw ratio is printed beside it.
    expect(notSent?.met).toBe(true);
    expect(notSent?.target).toContain("after the batch window each waits, call_count not sent");
    expect(notSent?.measured).toContain(`worst 1.10`);
    expect(notSent?.measured).toContain("with the window 1.49 (1.48–1.50)");
  });

  it("misses when the bridge costs more than the window, on any repetition", () => {
    const [, notSent] = report(variant("call_count not sent", false, [1400, 1520], [1000, 1000]));
    expect(notSent?.met).toBe(false);
  });

  it("misses when the emulator sent call_count in the fallback's run: that run did not measure the fallback", () => {
    const [, notSent] = report(variant("call_count not sent", true, [1000, 1000], [1000, 1000]));
    expect(notSent?.met).toBe(false);
    expect(notSent?.measured).toContain("does not measure the fallback");
  });

  it("lists the plain 1.1× without call_count as retired, with its reason", () => {
    const retired = retiredMatch(
      "2b. tool round trips: 10 round trips ≤ 1.1× the direct client's time, call_count not sent",
    );
    expect(retired?.reason).toContain("call_count");
    expect(retiredMatch("2b. tool round trips: 10 round trips ≤ 1.1× the direct client's time, call_count sent")).toBe(
      undefined,
    );
  });
});
