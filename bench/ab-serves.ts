/**
 * Two `serve`s side by side on one emulator: this checkout's and another's (a baseline commit checked out elsewhere,
 * its dist/ built), so a change is measured against what it changes in one run instead of across two noisy runs.
 * Both serve the same requests, interleaved in rounds (the order alternates each round):
 * - TTFT of one stream at a time (20 tokens at 500/s);
 * - the whole answer of one non-streaming request at a time (the same reply);
 * - serve's CPU per request (from /proc) at 10 concurrent one-token streams;
 * - serve's CPU per chunk at 200 concurrent streams of 100 one-token deltas (the throughput scenario's streams; the
 *   turn's own cost spread over its 100 chunks included).
 * Prints per-round medians and the ratio this ÷ baseline, median (lowest–highest) over the rounds, then each round's
 * pair.
 *
 * Usage: `npx tsx bench/ab-serves.ts --base-bin=/path/to/baseline/bin/cursor-bridge.js [--rounds=5] [--n=200]
 * [--only=chunk]` (`--only`: the measures whose label contains it)
 * (make a baseline with `git worktree add /tmp/base <commit>`, link or install its node_modules, `node tools/build.mjs`).
 */

import { startRemoteEmulator } from "./remote-emulator.js";
import { fmtSpread, spreadOf } from "./report.js";
import { type ServeProcess, startServe } from "./serve-process.js";
import { completeOnce, streamCompletion } from "./sse-client.js";

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const baseBin = option("base-bin");
if (baseBin === undefined) {
  process.stderr.write("usage: npx tsx bench/ab-serves.ts --base-bin=/path/to/baseline/bin/cursor-bridge.js\n");
  process.exit(2);
}
const rounds = Number(option("rounds") ?? 5);
const n = Number(option("n") ?? 200);

const median = (values: readonly number[]) => spreadOf(values).median;
const paced = { model: "auto", messages: [{ role: "user", content: "[[emu:tokens 20]] [[emu:rate 500]] probe" }] };
const long = { model: "auto", messages: [{ role: "user", content: "[[emu:tokens 100]] [[emu:rate 5000]] probe" }] };
const short = { model: "auto", messages: [{ role: "user", content: "[[emu:tokens 1]] [[emu:rate 5000]] probe" }] };

async function ttft(serve: ServeProcess): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await streamCompletion(serve.baseURL, paced);
    values.push((r.firstContentAt ?? Number.NaN) - r.startedAt);
  }
  return median(values);
}

async function whole(serve: ServeProcess): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await completeOnce(serve.baseURL, paced);
    values.push(r.endedAt - r.startedAt);
  }
  return median(values);
}

async function cpuPerRequest(serve: ServeProcess): Promise<number> {
  const before = await serve.cpuUsage();
  let left = n * 5;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (left-- > 0) await streamCompletion(serve.baseURL, short);
    }),
  );
  const after = await serve.cpuUsage();
  return (after.user + after.system - before.user - before.system) / 1000 / (n * 5);
}

async function cpuPerChunk(serve: ServeProcess): Promise<number> {
  const before = await serve.cpuUsage();
  let left = n * 2;
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (left-- > 0) await streamCompletion(serve.baseURL, long);
    }),
  );
  const after = await serve.cpuUsage();
  return (after.user + after.system - before.user - before.system) / (n * 2 * 100);
}

const emulator = await startRemoteEmulator({ heartbeatIntervalMs: 1000, bootstrapLatencyMs: 0, tokensPerSecond: 50 });
const sides = {
  base: await startServe({ emulatorUrl: emulator.url, bin: baseBin }),
  this: await startServe({ emulatorUrl: emulator.url }),
};
const allMeasures = {
  "TTFT, 1 stream (ms)": ttft,
  "non-streaming answer (ms)": whole,
  "serve CPU per request (ms)": cpuPerRequest,
  "serve CPU per chunk (µs)": cpuPerChunk,
};
// `--only=chunk`: only the measures whose label contains it.
const only = option("only");
const measures = Object.fromEntries(Object.entries(allMeasures).filter(([label]) => label.includes(only ?? "")));
const results = new Map<string, { base: number[]; this: number[] }>();
try {
  // Warm-up: JIT, connections, the stores' first writes.
  for (const serve of Object.values(sides)) {
    for (let i = 0; i < 50; i++) await streamCompletion(serve.baseURL, short);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (["base", "this"] as const) : (["this", "base"] as const);
    for (const [label, measure] of Object.entries(measures)) {
      const entry = results.get(label) ?? { base: [], this: [] };
      results.set(label, entry);
      for (const side of order) entry[side].push(await measure(sides[side]));
    }
    process.stderr.write(`[ab] round ${round + 1}/${rounds} done\n`);
  }
} finally {
  await Promise.all([sides.base.close(), sides.this.close()]);
  await emulator.close();
}
console.log(`baseline ${baseBin}; ${rounds} rounds, ${n} requests per measure per round`);
for (const [label, { base, this: current }] of results) {
  const ratio = spreadOf(current.map((value, i) => value / (base[i] as number)));
  console.log(
    `${label.padEnd(28)} baseline ${fmtSpread(spreadOf(base), 2)}  this ${fmtSpread(spreadOf(current), 2)}  ratio ${fmtSpread(ratio, 2)}`,
  );
  const pairs = current.map((value, i) => `${(base[i] as number).toFixed(2)}/${value.toFixed(2)}`);
  console.log(`${"".padEnd(28)} per round, baseline/this: ${pairs.join("  ")}`);
}
