/**
 * The bridge every scenario measures: `node bin/cursor-bridge.js serve` as shipped, a child process over real sockets,
 * with the file store in a throwaway data dir (or `--store redis://…` through `serveArgs`), logged in to the benchmark's
 * emulator with an API key (`--upstream cursor --cursor-api-url <emulator>`, CURSOR_API_KEY). Nothing of the bench
 * runs inside it: its CPU and RSS are read from /proc (Linux), so what is measured is the process a user starts.
 *
 * `BENCH_BRIDGE_CPU_PROF=<dir>` runs it under `node --cpu-prof`; `BENCH_SERVE_LOG_LEVEL=<level>` sets its log level and
 * shows its log (otherwise it logs at the shipped level, info, and the log is drained unread);
 * `BENCH_SERVE_NODE_ARGS="--flag …"` adds node options to it (V8 flag experiments).
 *
 * One exception, only when asked (`gcHook`), in the memory scenario: the post-GC floor needs a forced collection, so
 * that process starts with `--expose-gc --import bench/gc-hook.mjs`, a preload that collects on SIGUSR2 and prints
 * the memory it then holds on stderr; the raw serve starts with `--import bench/gc-hook.mjs` alone (`gcHook:
 * "read"`), which collects nothing and only answers V8's young-generation size on SIGUSR2 (no reading from /proc
 * gives it). Every other serve runs with no preload at all.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin/cursor-bridge.js", import.meta.url));
const GC_HOOK = new URL("./gc-hook.mjs", import.meta.url).href;
/** The Cursor user API key the benchmark's emulators accept (bench/remote-emulator.ts registers it). */
/**
 * Stops a serve the way a user does (SIGTERM, its graceful shutdown) and kills it when it has not exited within 10 s,
 * saying so; resolves once it has exited.
 */
export async function stopGracefully(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => {
    process.stderr.write("[bench] serve did not exit within 10 s of SIGTERM; killing it\n");
    child.kill("SIGKILL");
  }, 10_000);
  await exited;
  clearTimeout(timer);
}

export const BENCH_API_KEY = "bench-cursor-api-key";
/** serves still running: killed when the bench exits, even on a failure (they are not tied to it otherwise). */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});
/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ; 100 on every Linux build). */
const USER_HZ = 100;

/** What {@link startServe} needs. */
export interface ServeOptions {
  /** The emulator's `http://127.0.0.1:PORT`. */
  emulatorUrl: string;
  /** Extra `serve` arguments (e.g. `--store redis://…`, or a gateway's key options), appended last. */
  serveArgs?: readonly string[];
  /**
   * Preload bench/gc-hook.mjs (the memory scenario only): `"collect"` with `--expose-gc`, so
   * {@link ServeProcess.collectGarbage} works (the post-GC floor); `"read"` without, so {@link ServeProcess.memoryUsage}
   * also answers the young generation and nothing is ever collected (the raw serve).
   */
  gcHook?: "collect" | "read";
  /**
   * Run dist/'s ES modules, not bin/'s script versions (tools/script-loader.mjs), for a profile whose stacks are mapped
   * back to src/: only the ES modules have source maps. The two are the same code and cost the same once warm
   * (bench/ab-serves.ts, one sitting: CPU per request ratio 1.01, per chunk 0.94); they differ only in how they are
   * compiled at start. Also whenever BENCH_BRIDGE_CPU_PROF asks for profiles. CURSOR_BRIDGE_SCRIPTS set in the
   * environment wins.
   */
  sourceMapped?: boolean;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Another checkout's `bin/cursor-bridge.js` (bench/ab-serves.ts: a baseline beside this code). @default this one */
  bin?: string;
}

/** Memory of the serve process (bytes). */
export interface ServeMemory {
  rss: number;
  heapUsed?: number;
  external?: number;
  /** V8's young generation (new space, committed bytes), before any collection (gcHook only). */
  newSpace?: number;
  /** How many of those bytes are resident (touched), before any collection (gcHook only). */
  newSpaceResident?: number;
}

/** A running `serve`. */
export interface ServeProcess {
  /** `http://127.0.0.1:PORT/v1` */
  readonly baseURL: string;
  readonly pid: number;
  /** The arguments it was started with (after `serve`). */
  readonly args: readonly string[];
  /** CPU (user + system, all threads) the process used so far, from /proc/<pid>/stat: 10 ms resolution. */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  /**
   * Resident set size right now, read from /proc/<pid>/status (no collection forced); with `gcHook: "read"`, also the
   * young generation's sizes (committed and resident).
   */
  memoryUsage(): Promise<ServeMemory>;
  /** Three full collections (`gcHook: "collect"` only), then the process's own process.memoryUsage(). */
  collectGarbage(): Promise<ServeMemory>;
  close(): Promise<void>;
}

function procStat(pid: number): NodeJS.CpuUsage {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at ") "; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticksToMicros = (ticks: string | undefined) => (Number(ticks) * 1e6) / USER_HZ;
  return { user: ticksToMicros(fields[11]), system: ticksToMicros(fields[12]) };
}

function procRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

function waitForListening(child: ChildProcess, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve did not listen within 60 s:\n${output()}`)), 60_000);
    const onData = (part: Buffer) => {
      out += part.toString();
      const base = /listening on (http:\/\/\S+?\/v1)/.exec(out)?.[1];
      if (base !== undefined) {
        clearTimeout(timer);
        // The rest of stdout is drained unread.
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve(base);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before listening:\n${output()}`));
    });
  });
}

/** GET `url` until it answers 200 (the API serves: serve holds /health until then). */
export async function waitForHealth(baseURL: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const url = `${baseURL.replace(/\/v1$/, "")}/health`;
  while (performance.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not serving yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

/** Starts `node bin/cursor-bridge.js serve` against the emulator and resolves once `/health` answers 200. */
export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-bench-serve-"));
  const args = [
    ...["serve", "--upstream", "cursor", "--cursor-api-url", options.emulatorUrl],
    ...["--port", "0", "--data-dir", join(home, "data")],
    // The shipped log level (info: one access-log line per request) unless BENCH_SERVE_LOG_LEVEL asks for another,
    // whose output is then shown.
    ...(process.env.BENCH_SERVE_LOG_LEVEL === undefined ? [] : ["--log-level", process.env.BENCH_SERVE_LOG_LEVEL]),
    // Nothing else: the shipped defaults (a parked turn waits 15 min, longer than the memory scenario needs).
    ...(options.serveArgs ?? []),
  ];
  const nodeArgs =
    options.gcHook === "collect"
      ? ["--expose-gc", "--import", GC_HOOK]
      : options.gcHook === "read"
        ? ["--import", GC_HOOK]
        : [];
  // BENCH_BRIDGE_CPU_PROF=<dir>: every serve runs under `node --cpu-prof` (a .cpuprofile per process, on exit).
  const profileDir = process.env.BENCH_BRIDGE_CPU_PROF;
  const profiled = profileDir !== undefined && profileDir !== "";
  if (profiled) {
    mkdirSync(profileDir, { recursive: true });
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${profileDir}`);
  }
  const esModules = (options.sourceMapped === true || profiled) && process.env.CURSOR_BRIDGE_SCRIPTS === undefined;
  // BENCH_SERVE_NODE_ARGS="--flag …": node options for every serve only (experiments with V8 flags; the load
  // generator and the direct client in this process keep theirs).
  nodeArgs.push(...(process.env.BENCH_SERVE_NODE_ARGS ?? "").split(" ").filter(Boolean));
  const child = spawn(process.execPath, [...nodeArgs, options.bin ?? BIN, ...args], {
    cwd: home,
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data-home"),
      CURSOR_BRIDGE_CONFIG_DIR: join(home, "config"),
      CURSOR_API_KEY: BENCH_API_KEY,
      ...(esModules ? { CURSOR_BRIDGE_SCRIPTS: "0" } : {}),
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(child);
  child.once("exit", () => live.delete(child));
  let stderr = "";
  const gcWaiters: ((memory: ServeMemory) => void)[] = [];
  child.stderr?.on("data", (part: Buffer) => {
    const text = part.toString();
    if (process.env.BENCH_SERVE_LOG_LEVEL !== undefined) process.stderr.write(text);
    stderr = (stderr + text).slice(-20_000);
    for (let m = /bench-gc (\{[^\n]*\})\n/.exec(stderr); m !== null; m = /bench-gc (\{[^\n]*\})\n/.exec(stderr)) {
      stderr = stderr.slice(m.index + m[0].length);
      gcWaiters.shift()?.(JSON.parse(m[1] as string) as ServeMemory);
    }
  });
  const cleanup = () => rmSync(home, { recursive: true, force: true });
  let baseURL: string;
  try {
    baseURL = await waitForListening(child, () => stderr);
    await waitForHealth(baseURL);
  } catch (error) {
    child.kill("SIGKILL");
    cleanup();
    throw error;
  }
  const pid = child.pid as number;
  const askHook = () => {
    const done = new Promise<ServeMemory>((resolve) => gcWaiters.push(resolve));
    child.kill("SIGUSR2");
    return done;
  };
  return {
    baseURL,
    pid,
    args: args.slice(1),
    cpuUsage: async () => procStat(pid),
    memoryUsage: async () => {
      if (options.gcHook !== "read") return { rss: procRss(pid) };
      const { newSpace, newSpaceResident } = await askHook();
      return {
        rss: procRss(pid),
        ...(newSpace === undefined ? {} : { newSpace }),
        ...(newSpaceResident === undefined ? {} : { newSpaceResident }),
      };
    },
    collectGarbage: () => {
      if (options.gcHook !== "collect") return Promise.reject(new Error("serve was started without the gc hook"));
      return askHook();
    },
    async close() {
      await stopGracefully(child);
      cleanup();
    },
  };
}
