/**
 * Parent side of bench/emulator-process.ts: forks the emulator with the given options and exposes it with the
 * `Emulator` shape test/support/stack.ts expects (only `url` and `issueTokens` are used by a stack given an existing
 * emulator), plus asynchronous stats over IPC.
 */
import { fileURLToPath } from "node:url";
import type { EmulatorOptions, EmulatorStats } from "../src/emulator/index.js";
import { forkChild } from "./child-ipc.js";
import type { EmulatorReady } from "./emulator-process.js";

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
export async function startRemoteEmulator(options: EmulatorOptions): Promise<RemoteEmulator> {
  const entry = fileURLToPath(new URL("./emulator-process.ts", import.meta.url));
  const child = await forkChild<EmulatorReady>(entry, { BENCH_EMULATOR_OPTIONS: JSON.stringify(options) });
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
