/**
 * Child-process entry of the parked-memory floor (bench/parked-memory.ts): the direct connect-es client in a process
 * of its own, holding Runs open at their tool call (the call unanswered, as a bridge holds a parked turn while its
 * client runs the tool). Its RSS growth per held Run is what keeping a Cursor turn open costs a Node process with no
 * bridge around it: the floor under the bridge's figure.
 *
 * Asked over the fork IPC channel (bench/child-ipc.ts): `warm` holds another batch of 50 warm-up Runs (the parent warms
 * it up as it warms serve up: bench/parked-memory.ts, warmUpUntilYoungFull), `next` holds Runs up to the next of
 * `BENCH_HOLDER_COUNTS` (comma-separated), `rss` answers the process's resident set in bytes, `young` V8's young
 * generation (new space, committed bytes) and `youngResident` how many of those bytes are resident (touched).
 */
import { setMaxListeners } from "node:events";
import { getHeapSpaceStatistics } from "node:v8";
import { serveParent } from "./child-ipc.js";
import { createDirectClient, RawBlobStore, runDirectTurn } from "./raw-driver.js";
import { MCP_TOOLS } from "./workload.js";

/** First message to the parent. */
export interface HolderReady {
  type: "ready";
  pid: number;
}

const BATCH = 50;

const youngGeneration = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space");

async function main(): Promise<void> {
  const url = process.env.BENCH_HOLDER_UPSTREAM;
  const token = process.env.BENCH_HOLDER_TOKEN;
  if (url === undefined || token === undefined)
    throw new Error("BENCH_HOLDER_UPSTREAM and BENCH_HOLDER_TOKEN are needed");
  const counts = (process.env.BENCH_HOLDER_COUNTS ?? "200,1000").split(",").map(Number);
  const client = createDirectClient(url, token);
  const stop = new AbortController();
  // Every held Run listens on this one signal: no leak, so no warning at the eleventh.
  setMaxListeners(0, stop.signal);
  const held: Promise<unknown>[] = [];
  /** Starts Run `i` and resolves once the emulator asked for its tool call (the Run stays open). */
  const hold = (i: number | string) =>
    new Promise<void>((resolve, reject) => {
      const turn = runDirectTurn(client, {
        userText: `Check file held-${i} [[emu:tool read {"filePath":"/repo/held/file-${i}.ts"}]]`,
        conversationId: crypto.randomUUID(),
        model: "default",
        tools: MCP_TOOLS,
        blobs: new RawBlobStore(),
        signal: stop.signal,
        onToolCall: () => {
          resolve();
          return "hold";
        },
      });
      turn.then((r) => {
        if (!r.abandoned) reject(new Error(`Run held-${i} ended without a tool call`));
      }, reject);
      held.push(turn.catch(() => undefined));
    });
  let warmed = 0;
  const warmBatch = async () => {
    const from = warmed;
    warmed += BATCH;
    await Promise.all(Array.from({ length: BATCH }, (_, j) => hold(`warm-${from + j}`)));
  };
  let next = 0;
  const holdUpTo = async (count: number) => {
    for (; next < count; next += BATCH) {
      const from = next;
      await Promise.all(Array.from({ length: Math.min(BATCH, count - from) }, (_, j) => hold(from + j)));
    }
    next = count;
  };
  let countIndex = 0;
  serveParent(
    {
      warm: warmBatch,
      next: () => holdUpTo(counts[countIndex++] ?? Number.NaN),
      rss: () => process.memoryUsage.rss(),
      young: () => youngGeneration()?.space_size ?? Number.NaN,
      youngResident: () => youngGeneration()?.physical_space_size ?? Number.NaN,
    },
    async () => {
      stop.abort();
      await Promise.all(held);
    },
  );
  const ready: HolderReady = { type: "ready", pid: process.pid };
  process.send?.(ready);
}

void main();
