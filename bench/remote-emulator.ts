/**
 * Parent side of bench/emulator-process.ts: forks the emulator with the given options and exposes it with the
 * `Emulator` shape test/support/stack.ts expects (only `url` and `issueTokens` are used by a stack given an existing
 * emulator), plus asynchronous stats over IPC.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Emulator, EmulatorOptions, EmulatorStats } from "../src/emulator/index.js";
import type { EmulatorReady, EmulatorRequest } from "./emulator-process.js";

/** An emulator in a child process. */
export interface RemoteEmulator {
  readonly url: string;
  readonly accessToken: string;
  /** The `Emulator` view for startStack({ existingEmulator }). */
  readonly asEmulator: Emulator;
  stats(): Promise<EmulatorStats>;
  resetStats(): Promise<void>;
  /** The child's process.cpuUsage(). */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  close(): Promise<void>;
}

/** Starts the emulator child and waits until it listens. */
export async function startRemoteEmulator(options: EmulatorOptions): Promise<RemoteEmulator> {
  const entry = fileURLToPath(new URL("./emulator-process.ts", import.meta.url));
  const child: ChildProcess = fork(entry, [], {
    execArgv: ["--import", import.meta.resolve("tsx")],
    env: { ...process.env, BENCH_EMULATOR_OPTIONS: JSON.stringify(options) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<EmulatorReady>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`emulator process exited with ${code}`)));
    child.once("message", (message) => resolve(message as EmulatorReady));
  });
  child.removeAllListeners("exit");
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  child.on("message", (message: { id: number; result: unknown }) => {
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  });
  const ask = <T>(type: EmulatorRequest["type"]): Promise<T> =>
    new Promise<T>((resolve) => {
      const id = nextId++;
      pending.set(id, (result) => resolve(result as T));
      const request: EmulatorRequest = { id, type };
      child.send(request);
    });
  const tokens = { accessToken: ready.accessToken, refreshToken: ready.accessToken };
  const unsupported = (): never => {
    throw new Error("not available on the benchmark's remote emulator");
  };
  const asEmulator: Emulator = {
    url: ready.url,
    stats: unsupported,
    resetStats: unsupported,
    issueTokens: () => tokens,
    approveLogin: unsupported,
    addApiKey: unsupported,
    close: async () => undefined,
  };
  return {
    url: ready.url,
    accessToken: ready.accessToken,
    asEmulator,
    stats: () => ask<EmulatorStats>("stats"),
    resetStats: () => ask<void>("reset"),
    cpuUsage: () => ask<NodeJS.CpuUsage>("cpu"),
    async close() {
      if (!child.connected) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      await ask<null>("close");
      await exited;
    },
  };
}
