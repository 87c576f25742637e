/**
 * Child-process entry of the benchmark's cursor-bridge: the same composition as the integration tests
 * (test/support/stack.ts) against the emulator child, in a process of its own so that its CPU and memory are read
 * alone, apart from the load generator's clients. Started with --expose-gc; answers the parent over the fork IPC
 * channel (bench/child-ipc.ts). Set BENCH_BRIDGE_CPU_PROF=<dir> to run it under `node --cpu-prof`.
 */
import type { Emulator } from "../src/emulator/index.js";
import { startStack } from "../test/support/stack.js";
import { serveParent } from "./child-ipc.js";

/** What the parent passes in BENCH_BRIDGE_OPTIONS. */
export interface BridgeChildOptions {
  emulatorUrl: string;
  accessToken: string;
}

/** First message to the parent. */
export interface BridgeReady {
  type: "ready";
  baseURL: string;
  pid: number;
}

/** The `Emulator` view startStack({ existingEmulator }) needs: only `url` and `issueTokens` are used. */
function emulatorAt(url: string, accessToken: string): Emulator {
  const tokens = { accessToken, refreshToken: accessToken };
  const unsupported = (): never => {
    throw new Error("not available on the benchmark's remote emulator");
  };
  return {
    url,
    stats: unsupported,
    resetStats: unsupported,
    issueTokens: () => tokens,
    approveLogin: unsupported,
    addApiKey: unsupported,
    limitUsage: unsupported,
    close: async () => undefined,
  };
}

async function collectGarbage(): Promise<void> {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error("the bridge child runs with --expose-gc");
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const options = JSON.parse(process.env.BENCH_BRIDGE_OPTIONS ?? "{}") as BridgeChildOptions;
  const stack = await startStack({
    existingEmulator: emulatorAt(options.emulatorUrl, options.accessToken),
    transport: "http2",
    // Long enough for the memory scenario to hold 1,000 parked turns while it measures.
    parkedTurnTtlMs: 10 * 60_000,
    stallTimeoutMs: 60_000,
  });
  serveParent(
    {
      cpu: () => process.cpuUsage(),
      memory: () => process.memoryUsage(),
      gc: async () => {
        await collectGarbage();
        return process.memoryUsage();
      },
      parkedSize: () => stack.parked.size(),
      parkedCloseAll: () => stack.parked.closeAll(),
    },
    () => stack.close(),
  );
  const ready: BridgeReady = { type: "ready", baseURL: stack.baseURL, pid: process.pid };
  process.send?.(ready);
}

void main();
