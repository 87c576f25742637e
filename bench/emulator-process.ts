/**
 * Child-process entry of the benchmark's emulator. The emulator runs in its own process so that the bench process
 * measures only cursor-bridge (and the clients driving it): heap per parked conversation and CPU per chunk would
 * otherwise include the emulator's side of every open Run. Talks to the parent over the fork IPC channel.
 */
import { type EmulatorOptions, startEmulator } from "../src/emulator/index.js";

/** Requests the parent sends; each reply echoes `id`. */
export type EmulatorRequest = { id: number; type: "stats" | "reset" | "cpu" | "close" };

/** First message to the parent. */
export interface EmulatorReady {
  type: "ready";
  url: string;
  accessToken: string;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.env.BENCH_EMULATOR_OPTIONS ?? "{}") as EmulatorOptions;
  const emulator = await startEmulator({ ...options, port: 0, host: "127.0.0.1" });
  const ready: EmulatorReady = { type: "ready", url: emulator.url, accessToken: emulator.issueTokens().accessToken };
  process.send?.(ready);
  process.on("message", (raw: EmulatorRequest) => {
    const reply = (result: unknown) => process.send?.({ id: raw.id, result });
    if (raw.type === "stats") reply(emulator.stats());
    else if (raw.type === "reset") reply(emulator.resetStats());
    else if (raw.type === "cpu") reply(process.cpuUsage());
    else if (raw.type === "close") {
      void emulator.close().then(() => {
        reply(null);
        process.disconnect();
      });
    }
  });
  process.on("disconnect", () => {
    void emulator.close().finally(() => process.exit(0));
  });
}

void main();
