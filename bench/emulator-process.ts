/**
 * Child-process entry of the benchmark's emulator. The emulator runs in its own process so that neither the bridge
 * process nor the load generator is charged for the emulator's side of every open Run. Talks to the parent over the
 * fork IPC channel (bench/child-ipc.ts).
 */
import { type EmulatorOptions, startEmulator } from "../src/emulator/index.js";
import { serveParent } from "./child-ipc.js";

/** First message to the parent. */
export interface EmulatorReady {
  type: "ready";
  url: string;
  accessToken: string;
  pid: number;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.env.BENCH_EMULATOR_OPTIONS ?? "{}") as EmulatorOptions;
  const emulator = await startEmulator({ ...options, port: 0, host: "127.0.0.1" });
  serveParent(
    {
      stats: () => emulator.stats(),
      reset: () => emulator.resetStats(),
      cpu: () => process.cpuUsage(),
    },
    () => emulator.close(),
  );
  const ready: EmulatorReady = {
    type: "ready",
    url: emulator.url,
    accessToken: emulator.issueTokens().accessToken,
    pid: process.pid,
  };
  process.send?.(ready);
}

void main();
