/**
 * Where serve's CPU per request goes. Runs one `serve` on a bench emulator, sends it one-token streaming chat
 * completions (a one-request loop, or `--concurrency=200` streams at a time) after a warm-up, samples it while they
 * run, and attributes every sample to a stage of the request path (parse, validation, history key, translation,
 * protobuf, store write, SSE write, logging, metrics, hono, node http, …) by the innermost frame of its stack that
 * belongs to one, mapped back to src/ through dist/'s source maps. Prints µs per request per stage (`--files`: and
 * per source file), scaled so the stages add up to serve's CPU per request read from /proc in the same window.
 *
 * Two samplers:
 * - `perf` (the default): `perf record -e task-clock -g` on the serve process (started with `--perf-basic-prof
 *   --interpreted-frames-native-stack`), which samples CPU time only, on every thread, kernel included: the libuv
 *   thread pool and V8's GC helpers are counted, and a thread waiting for a core is not;
 * - `cpu-prof` (`--sampler=cpu-prof`): `node --cpu-prof`, V8's own profiler, which samples the main thread on the
 *   wall clock: on a loaded machine, time the thread spent preempted lands on whatever frame it was in (system calls
 *   look far dearer than they are), and other threads are not seen.
 *
 * Usage: `npx tsx bench/profile-stages.ts [--requests=4000] [--warmup=N] [--concurrency=10] [--sampler=perf|cpu-prof]
 * [--tokens=1] [--bin=<other checkout>/bin/cursor-bridge.js] [--files] [--keep=<perf.data>] [--direct]` (`--direct`:
 * also the direct client's CPU per turn, same prompt and concurrency; `--tokens=100`: streams of 100 one-token deltas,
 * so the per-chunk path dominates, and each stage is also given per chunk).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createDirectClient, runPromptTurn } from "./raw-driver.js";
import { startRemoteEmulator } from "./remote-emulator.js";
import { startServe } from "./serve-process.js";
import { streamCompletion } from "./sse-client.js";

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const requests = Number(option("requests") ?? 4000);
const concurrency = Number(option("concurrency") ?? 10);
const sampler = option("sampler") ?? "perf";
const showFiles = process.argv.includes("--files");
/** One-token deltas per stream (`--tokens=100`: the per-chunk path dominates; stages are then also given per chunk). */
const tokens = Number(option("tokens") ?? 1);
const prompt = `[[emu:tokens ${tokens}]] [[emu:rate 5000]] probe`;

/** Stages by the source a JS frame maps to (relative to the checkout, or node:…), first match wins. */
const STAGES: [stage: string, test: RegExp][] = [
  ["validation (zod)", /node_modules\/zod\/|surfaces\/[a-z]+\/request\.ts|kit\/zod-issues/],
  ["protobuf encode/decode", /@bufbuild\/protobuf|src\/gen\//],
  ["hono routing/middleware", /node_modules\/hono\//],
  ["node-server adapter (Request/Response)", /@hono\/node-server|undici/],
  ["metrics", /src\/gateway\/metrics|prom-client/],
  ["gateway (keys, limits)", /src\/gateway\//],
  ["logging (access log, logger)", /kit\/access-log|kit\/recent-requests|util\/logger|cli\/io\.ts/],
  ["parse (JSON body, limits)", /kit\/json-body|kit\/json-limits|kit\/request-io|surfaces\/[a-z]+\/parse\.ts/],
  ["history key/fingerprint", /engine\/history\.ts|history-fingerprint/],
  [
    "translation (request → engine, engine → wire)",
    /surfaces\/[a-z]+\/(translate|events|wire|result|response-format)\.ts|kit\/translate/,
  ],
  ["SSE write", /kit\/sse\.ts|util\/pull-body|server\/write-coalescing/],
  ["store write (blobs, checkpoints, conversations)", /src\/stores\//],
  ["Connect/HTTP2 upstream (envelopes, session)", /src\/protocol\/|@connectrpc/],
  ["engine (routing, parking)", /src\/engine\//],
  ["backend turn (agent client, run session)", /src\/backend\//],
  ["server/kit (app, guards, surface app, run-surface)", /src\/server\/|src\/surfaces\/|src\/cli\//],
  ["util", /src\/util\//],
];
/**
 * Stages of stacks no JS frame claims (perf only: native code, the kernel, other threads), by symbol, first match
 * wins. libc has no frame pointers, so a system call's stack often ends at libc: the kernel symbols say what it was.
 */
const NATIVE: [stage: string, test: RegExp][] = [
  [
    "GC",
    /v8::internal::(Heap|Scavenger|MarkCompact|MinorMarkCompact|Sweeper|ConcurrentMarking|IncrementalMarking|GCTracer|MemoryAllocator|ScavengeJob|ArrayBufferSweeper|MarkingVisitor|ConcurrentMarkingVisitor|PagedSpace|MemoryReducer)/,
  ],
  ["V8 compiler (JIT)", /v8::internal::(compiler|maglev|baseline|Compiler|OptimizingCompileDispatcher|Parser|Scanner)/],
  ["store write: file creation (ext4 inode allocation, kernel)", /__ext4_new_inode/],
  [
    "store write: other file system calls (kernel)",
    /ext4_|vfs_|do_renameat|path_openat|do_sys_open|utimes|chmod_common|sys_fsync/,
  ],
  ["thread pool hand-offs and wake-ups (futex, scheduler)", /futex|uv_cond|uv__work_done|uv__async|eventfd/],
  ["Connect/HTTP2 upstream (envelopes, session)", /nghttp2|Http2/],
  ["node http", /llhttp|node::http_parser|Parser::/],
  [
    "sockets (kernel TCP, epoll)",
    /tcp_|sock_|inet_|ep_poll|epoll|__sys_sendmsg|sock_write|sock_read|ip_finish|__netif|net_rx/,
  ],
];
type Frame = { kind: "js"; source: string; name: string } | { kind: "native"; symbol: string };
interface Sample {
  /** Sampled on the main (JavaScript) thread. */
  main: boolean;
  weight: number;
  /** Leaf first. */
  frames: Frame[];
}

const maps = new Map<string, SourceMap | null>();
/** The original source of a position (0-based line and column) in a built file, relative to src/ or node_modules/. */
function sourceOf(url: string, line: number, column: number): string {
  if (!url.startsWith("file://") && !url.startsWith("/")) return url;
  let map = maps.get(url);
  if (map === undefined) {
    try {
      const file = url.startsWith("/") ? url : fileURLToPath(url);
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")));
    } catch {
      map = null;
    }
    maps.set(url, map);
  }
  const entry = map?.findEntry(line, column) as { originalSource?: string } | undefined;
  return (entry?.originalSource ?? url).replace(/^.*?(node_modules\/|src\/)/, "$1");
}

/** The stage of one sample: its innermost JS frame with a stage, else what its native frames were doing. */
function stageOf(sample: Sample): { stage: string; file: string } {
  let firstJs: string | undefined;
  for (const frame of sample.frames) {
    if (frame.kind === "native") {
      if (firstJs === undefined && NATIVE[0]?.[1].test(frame.symbol)) return { stage: "GC", file: "(gc)" };
      continue;
    }
    firstJs ??= frame.source;
    const hit = STAGES.find(([, test]) => test.test(frame.source));
    if (hit !== undefined) {
      return { stage: hit[0], file: frame.source === firstJs ? firstJs : `${frame.source} → ${firstJs}` };
    }
  }
  const symbols = sample.frames.map((f) => (f.kind === "native" ? f.symbol : "")).join(" ");
  for (const [stage, test] of NATIVE) if (test.test(symbols)) return { stage, file: stage };
  if (firstJs !== undefined) {
    return { stage: /http/.test(firstJs) ? "node http" : "node internals (timers, streams, net)", file: firstJs };
  }
  if (!sample.main) return { stage: "other threads", file: symbols.slice(0, 100) };
  const leaf = sample.frames[0];
  return {
    stage: "native: event loop, other",
    file: leaf === undefined ? "(none)" : leaf.kind === "native" ? leaf.symbol.slice(0, 80) : leaf.source,
  };
}

function report(samples: Sample[], count: number, procUs: number): void {
  const stages = new Map<string, number>();
  const files = new Map<string, number>();
  let total = 0;
  for (const sample of samples) {
    const { stage, file } = stageOf(sample);
    stages.set(stage, (stages.get(stage) ?? 0) + sample.weight);
    files.set(file, (files.get(file) ?? 0) + sample.weight);
    total += sample.weight;
  }
  const scale = procUs > 0 ? procUs / total : 1;
  console.log(
    `${count} requests at concurrency ${concurrency} (${sampler}): ${(total / 1000).toFixed(0)} ms sampled, ` +
      `/proc ${(procUs / 1000).toFixed(0)} ms → ${(procUs / count).toFixed(0)} µs CPU per request; µs per request by stage:`,
  );
  if (tokens > 1) console.log(`${tokens}-token streams: the second column is per chunk (per request ÷ ${tokens})`);
  for (const [stage, us] of [...stages].sort((a, b) => b[1] - a[1])) {
    const perChunk = tokens > 1 ? `${((us * scale) / count / tokens).toFixed(2).padStart(8)}` : "";
    console.log(`${((us * scale) / count).toFixed(1).padStart(8)}${perChunk}  ${stage}`);
  }
  if (showFiles) {
    console.log("\nby file (µs per request, top 70):");
    for (const [file, us] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 70)) {
      console.log(`${((us * scale) / count).toFixed(1).padStart(8)}  ${file}`);
    }
  }
}

/** `perf script` output → samples (`-F pid,tid,period,ip,sym`). */
function parsePerf(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const block of text.split("\n\n")) {
    const lines = block.split("\n").filter((l) => l.trim() !== "");
    const header = lines.shift();
    if (header === undefined) continue;
    const head = /^\s*(\d+)\/(\d+)\s+(\d+)\s*$/.exec(header.replace(/\s*task-clock:?.*$/, ""));
    if (head === null) continue;
    const frames: Frame[] = [];
    for (const line of lines) {
      const symbol = line.trim().replace(/^[0-9a-f]+\s+/, "");
      const js = /^JS:[*~^+-]?(.*?)\s*(\S+):(\d+):(\d+)(\+0x[0-9a-f]+)?(\s+\(.*\))?$/.exec(symbol);
      if (js !== null) {
        const [, name = "", url = "", lineNo = "1", col = "1"] = js;
        frames.push({ kind: "js", name, source: sourceOf(url, Number(lineNo) - 1, Number(col) - 1) });
      } else frames.push({ kind: "native", symbol });
    }
    samples.push({ main: head[1] === head[2], weight: Number(head[3]) / 1000, frames });
  }
  return samples;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A `.cpuprofile`'s samples within `window` (µs on the profile's clock, CLOCK_MONOTONIC as process.hrtime). */
function parseCpuProfile(profile: CpuProfile, window: [number, number]): Sample[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<number, Frame[]>();
  const stackOf = (id: number): Frame[] => {
    let frames = stacks.get(id);
    if (frames !== undefined) return frames;
    frames = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber, columnNumber } = (byId.get(at) as ProfileNode).callFrame;
      if (functionName === "(root)") break;
      if (url === "") frames.push({ kind: "native", symbol: functionName });
      else frames.push({ kind: "js", name: functionName, source: sourceOf(url, lineNumber, columnNumber) });
    }
    stacks.set(id, frames);
    return frames;
  };
  const samples: Sample[] = [];
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] as number;
    if (t < window[0] || t > window[1]) continue;
    const frames = stackOf(profile.samples[i] as number);
    const leaf = frames[0];
    if (leaf?.kind === "native" && leaf.symbol === "(idle)") continue;
    samples.push({ main: true, weight: profile.timeDeltas[i + 1] ?? 0, frames });
  }
  return samples;
}

/** The samples of a `perf record` file. */
function perfSamples(file: string): Sample[] {
  const text = execFileSync("perf", ["script", "-i", file, "-F", "pid,tid,period,ip,sym"], {
    maxBuffer: 2 ** 31 - 1,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return parsePerf(text);
}

/**
 * `--direct`: the CPU per turn of the direct connect-es client (bench/raw-driver.ts, this process's own CPU while it
 * runs only that client) on the same emulator, prompt and concurrency: what serve's CPU per request is held against.
 */
async function directTurnCpu(url: string, accessToken: string): Promise<number> {
  const client = createDirectClient(url, accessToken);
  const turns = async (total: number) => {
    let left = total;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await runPromptTurn(client, prompt);
      }),
    );
  };
  await turns(Number(option("warmup") ?? 500));
  const before = process.cpuUsage();
  await turns(requests);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / requests;
}

/** Samples `requests` requests of a fresh serve and prints the stages. */
async function profileRun(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-profile-"));
  const perf = sampler === "perf";
  if (perf)
    process.env.BENCH_SERVE_NODE_ARGS = `${process.env.BENCH_SERVE_NODE_ARGS ?? ""} --perf-basic-prof --interpreted-frames-native-stack`;
  else {
    process.env.BENCH_BRIDGE_CPU_PROF = dir;
    process.env.BENCH_SERVE_NODE_ARGS = `${process.env.BENCH_SERVE_NODE_ARGS ?? ""} --cpu-prof-interval=250`;
  }
  const emulator = await startRemoteEmulator({ heartbeatIntervalMs: 1000, bootstrapLatencyMs: 0, tokensPerSecond: 50 });
  const bin = option("bin");
  const serve = await startServe({
    emulatorUrl: emulator.url,
    sourceMapped: true,
    ...(bin === undefined ? {} : { bin }),
  });
  const body = { model: "auto", messages: [{ role: "user", content: prompt }] };
  const drive = async (total: number) => {
    let left = total;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await streamCompletion(serve.baseURL, body);
      }),
    );
  };
  const perfData = option("keep") ?? join(dir, "perf.data");
  let window: [number, number] = [0, 0];
  let procUs = 0;
  let recorder: ChildProcess | undefined;
  let directUs: number | undefined;
  try {
    await drive(Number(option("warmup") ?? Math.max(500, concurrency * 5)));
    if (perf) {
      recorder = spawn(
        "perf",
        ["record", "-e", "task-clock", "-F", "4000", "-g", "-p", String(serve.pid), "-o", perfData],
        {
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const before = await serve.cpuUsage();
    const start = Number(process.hrtime.bigint() / 1000n);
    await drive(requests);
    window = [start, Number(process.hrtime.bigint() / 1000n)];
    const after = await serve.cpuUsage();
    procUs = after.user + after.system - before.user - before.system;
    if (recorder !== undefined) {
      const stopped = new Promise((resolve) => recorder?.once("exit", resolve));
      recorder.kill("SIGINT");
      await stopped;
    }
    if (process.argv.includes("--direct")) directUs = await directTurnCpu(emulator.url, emulator.accessToken);
  } finally {
    await serve.close();
    await emulator.close();
  }
  let samples: Sample[];
  if (perf) {
    samples = perfSamples(perfData);
  } else {
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (file === undefined) throw new Error(`no profile in ${dir}`);
    samples = parseCpuProfile(JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile, window);
  }
  report(samples, requests, procUs);
  if (directUs !== undefined) {
    console.log(
      `the direct connect-es client's whole turn, same prompt and concurrency: ${directUs.toFixed(0)} µs CPU`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}

// `--perf-data=<file> --proc-us=<µs>`: analyse a kept recording (`--keep=<file>`) again without running anything.
const kept = option("perf-data");
if (kept === undefined) await profileRun();
else report(perfSamples(kept), requests, Number(option("proc-us") ?? 0));
