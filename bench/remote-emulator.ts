/**
 * Parent side of bench/emulator-process.ts: forks the emulator with the given options (plus the API key serve logs in
 * with) and exposes its URL, a token for the direct client, and its stats and CPU over IPC.
 */
import { fileURLToPath } from "node:url";
import type { EmulatorOptions, EmulatorStats } from "../src/emulator/index.js";
import { forkChild } from "./child-ipc.js";
import type { EmulatorReady } from "./emulator-process.js";
import { BENCH_API_KEY } from "./serve-process.js";

/** An emulator in a child process. */
export interface RemoteEmulator {
  readonly url: string;
  readonly accessToken: string;
  readonly pid: number;
  stats(): Promise<EmulatorStats>;
  resetStats(): Promise<void>;
  /** The child's process.cpuUsage(). */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  close(): Promise<void>;
}

/** Starts the emulator child and waits until it listens. */
export async function startRemoteEmulator(
  options: EmulatorOptions & { toolCallCount?: boolean },
): Promise<RemoteEmulator> {
  const entry = fileURLToPath(new URL("./emulator-process.ts", import.meta.url));
  // serve logs in with the benchmark's API key (bench/serve-process.ts).
  const withKey = { ...options, apiKeys: [...(options.apiKeys ?? []), BENCH_API_KEY] };
  const child = await forkChild<EmulatorReady>(entry, { BENCH_EMULATOR_OPTIONS: JSON.stringify(withKey) });
  return {
    url: child.ready.url,
    accessToken: child.ready.accessToken,
    pid: child.ready.pid,
    stats: () => child.ask<EmulatorStats>("stats"),
    resetStats: () => child.ask<void>("reset"),
    cpuUsage: () => child.ask<NodeJS.CpuUsage>("cpu"),
    close: () => child.close(),
  };
}
