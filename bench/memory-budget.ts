/**
 * Scenario 7 (memory budget): `cursor-bridge serve --upstream emulator` in its own process (the embedded
 * emulator echoes the text), 30 concurrent non-streaming requests each carrying 3.9 MB of text (a conversation of user
 * messages of at most 0.9 MB: Cursor refuses a single user message above 1 MiB). Samples the
 * RSS of the server's whole process tree while they run and afterwards while it idles. Targets: every request
 * answered 200, peak RSS ≤ 600 MB, and back under 250 MB within 60 s of idle. Before the load, the same process
 * answers 5 small requests and idles 2 s: its RSS then is the "idle server after 5 requests" of issue 17 (≤ 80 MB).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { fmt, type Table, type TargetResult } from "./report.js";
import { stopGracefully } from "./serve-process.js";

const run = promisify(execFile);
const MB = 1024 * 1024;

/** The budget. */
export const MEMORY_BUDGET = { concurrency: 30, messageBytes: 3.9e6, peakMb: 600, idleMb: 250, idleWithinMs: 60_000 };

/** Issue 17: RSS of an idle server after 5 small requests. */
export const IDLE_SERVER = { requests: 5, settleMs: 2_000, rssMb: 80 };

/** Scenario 7 result. */
export interface MemoryBudgetResult {
  concurrency: number;
  messageBytes: number;
  statuses: Record<string, number>;
  /** RSS after 5 small requests and 2 s of idle (issue 17). */
  idleAfterSmallRequestsMb: number;
  baselineMb: number;
  peakMb: number;
  /** RSS when the last answer arrived. */
  afterMb: number;
  /** RSS at the end of the idle wait, and how long it took to get under the idle target (undefined: never). */
  idleMb: number;
  idleUnderTargetAfterMs: number | undefined;
  durationMs: number;
}

/** RSS in bytes of `pid` and all its descendants (`ps`, so Linux and macOS). */
export async function treeRss(pid: number): Promise<number> {
  const { stdout } = await run("ps", ["-A", "-o", "pid=,ppid=,rss="]);
  const rows = stdout
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number, number]);
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, parent] of rows) {
      if (tree.has(parent) && !tree.has(p)) {
        tree.add(p);
        grew = true;
      }
    }
  }
  return rows.reduce((sum, [p, , rss]) => (tree.has(p) ? sum + rss * 1024 : sum), 0);
}

function post(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      // One connection per request: a kept-alive socket reused just as the server's keep-alive timeout closes it
      // (the idle pauses here are seconds long) would fail a request for a reason that has nothing to do with memory.
      {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Cursor refuses one user message above about 1 MiB (docs/protocol.md): a large request spreads its text over
 * several.
 */
export const LARGE_REQUEST_MESSAGE_BYTES = 900_000;

/**
 * About `bytes` bytes of plain text (`line` repeated) as a conversation: user messages of at most
 * {@link LARGE_REQUEST_MESSAGE_BYTES}, each answered by a short assistant message, ending with a user message (a
 * long session whose pasted files went in over several turns).
 */
export function largeConversation(line: string, bytes: number): Array<{ role: "user" | "assistant"; content: string }> {
  const text = line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
  const messages: Array<{ role: "user" | "assistant"; content: string }> = [];
  for (let at = 0; at < text.length; at += LARGE_REQUEST_MESSAGE_BYTES) {
    if (at > 0) messages.push({ role: "assistant", content: "Noted." });
    messages.push({ role: "user", content: text.slice(at, at + LARGE_REQUEST_MESSAGE_BYTES) });
  }
  return messages;
}

/** About `bytes` bytes of plain text over several user messages, different per request. */
function bigConversation(i: number, bytes: number) {
  return largeConversation(
    `Request ${i}: the quick brown fox jumps over the lazy dog while the parser reads section ${i}.\n`,
    bytes,
  );
}

export async function startServer(dir: string): Promise<{ pid: number; url: string; stop: () => Promise<void> }> {
  const bin = fileURLToPath(new URL("../bin/cursor-bridge.js", import.meta.url));
  const child = spawn(
    process.execPath,
    [bin, "serve", "--upstream", "emulator", "--port", "0", "--data-dir", join(dir, "data")],
    {
      env: {
        ...process.env,
        CURSOR_BRIDGE_CONFIG_DIR: join(dir, "config"),
        CURSOR_BRIDGE_LOG_LEVEL: process.env.BENCH_SERVE_LOG_LEVEL ?? "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^\s/]+)/.exec(out);
      if (match?.[1] !== undefined) {
        child.stdout?.off("data", onData);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`serve exited with ${code} before listening:\n${out}`)));
  });
  child.stdout?.resume();
  // BENCH_SERVE_LOG_LEVEL=debug shows the server's log (its own memory reports among it).
  if (process.env.BENCH_SERVE_LOG_LEVEL === undefined) child.stderr?.resume();
  else child.stderr?.pipe(process.stderr);
  // A server that does not finish its graceful shutdown in 10 s is killed (and the harness says so).
  const stop = () => stopGracefully(child);
  if (child.pid === undefined) throw new Error("serve did not start");
  return { pid: child.pid, url, stop };
}

/** Scenario 7. */
export async function runMemoryBudget(
  concurrency = MEMORY_BUDGET.concurrency,
  messageBytes = MEMORY_BUDGET.messageBytes,
): Promise<MemoryBudgetResult> {
  const dir = await mkdtemp(join(tmpdir(), "cursor-bridge-membudget-"));
  const server = await startServer(dir);
  const started = performance.now();
  try {
    const url = `${server.url}/v1/chat/completions`;
    // Warm-up: a few small requests, so the baseline includes a server that has served.
    for (let i = 0; i < IDLE_SERVER.requests; i++) {
      await post(url, JSON.stringify({ model: "auto", messages: [{ role: "user", content: `warm up ${i}` }] }));
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_SERVER.settleMs));
    const baseline = await treeRss(server.pid);
    const bodies = Array.from({ length: concurrency }, (_, i) =>
      JSON.stringify({ model: "auto", messages: bigConversation(i, messageBytes) }),
    );
    let peak = baseline;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await treeRss(server.pid));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const statuses: Record<string, number> = {};
    await Promise.all(
      bodies.map(async (body) => {
        const status = await post(url, body).catch(() => 0);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
    sampling = false;
    await sampler;
    const after = await treeRss(server.pid);
    peak = Math.max(peak, after);
    bodies.length = 0;
    const idleStart = performance.now();
    let idle = after;
    let underAfter: number | undefined = after < MEMORY_BUDGET.idleMb * MB ? 0 : undefined;
    while (underAfter === undefined && performance.now() - idleStart < MEMORY_BUDGET.idleWithinMs) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      idle = await treeRss(server.pid);
      if (idle < MEMORY_BUDGET.idleMb * MB) underAfter = performance.now() - idleStart;
    }
    return {
      concurrency,
      messageBytes,
      statuses,
      idleAfterSmallRequestsMb: baseline / MB,
      baselineMb: baseline / MB,
      peakMb: peak / MB,
      afterMb: after / MB,
      idleMb: idle / MB,
      idleUnderTargetAfterMs: underAfter,
      durationMs: performance.now() - started,
    };
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Table and targets of scenario 7. */
export function memoryBudgetReport(r: MemoryBudgetResult): { table: Table; targets: TargetResult[] } {
  const ok = r.statuses["200"] ?? 0;
  const table: Table = {
    title: `7. Memory budget (${r.concurrency} concurrent ${fmt(r.messageBytes / 1e6, 1)} MB non-streaming requests)`,
    header: ["answered 200", "baseline MB", "peak MB", "after MB", "idle MB", "under idle target after"],
    rows: [
      [
        `${ok}/${r.concurrency}`,
        fmt(r.baselineMb, 0),
        fmt(r.peakMb, 0),
        fmt(r.afterMb, 0),
        fmt(r.idleMb, 0),
        r.idleUnderTargetAfterMs === undefined ? "never" : `${fmt(r.idleUnderTargetAfterMs / 1000, 1)} s`,
      ],
    ],
    notes: [
      "`cursor-bridge serve --upstream emulator` in its own process; RSS of its whole process tree, sampled every 50 ms",
      `baseline = RSS after ${IDLE_SERVER.requests} small requests and ${IDLE_SERVER.settleMs / 1000} s idle (the embedded emulator included)`,
      `statuses: ${JSON.stringify(r.statuses)}`,
    ],
  };
  const targets: TargetResult[] = [
    {
      scenario: "7. memory budget",
      target: `all ${r.concurrency} answered 200 and peak RSS ≤ ${MEMORY_BUDGET.peakMb} MB`,
      measured: `${ok}/${r.concurrency} answered 200, peak ${fmt(r.peakMb, 0)} MB`,
      met: ok === r.concurrency && r.peakMb <= MEMORY_BUDGET.peakMb,
    },
    {
      scenario: "7. memory budget",
      target: `RSS < ${MEMORY_BUDGET.idleMb} MB within ${MEMORY_BUDGET.idleWithinMs / 1000} s of idle`,
      measured:
        r.idleUnderTargetAfterMs === undefined
          ? `${fmt(r.idleMb, 0)} MB after ${MEMORY_BUDGET.idleWithinMs / 1000} s`
          : `under after ${fmt(r.idleUnderTargetAfterMs / 1000, 1)} s`,
      met: r.idleUnderTargetAfterMs !== undefined,
    },
    {
      scenario: "7. memory budget",
      target: `RSS of an idle server after ${IDLE_SERVER.requests} requests ≤ ${IDLE_SERVER.rssMb} MB`,
      measured: `${fmt(r.idleAfterSmallRequestsMb, 0)} MB`,
      met: r.idleAfterSmallRequestsMb <= IDLE_SERVER.rssMb,
    },
  ];
  return { table, targets };
}
