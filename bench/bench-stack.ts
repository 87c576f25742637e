/**
 * The benchmark's setup: three processes. The emulator (bench/emulator-process.ts) and cursor-bridge
 * (bench/bridge-process.ts, the same composition as the integration tests) each run in a child process; this process
 * is the load generator, driving the bridge over HTTP and the emulator directly with the baseline connect-es client.
 */
import type { EmulatorOptions } from "../src/emulator/index.js";
import { createDirectClient, type DirectClient } from "./raw-driver.js";
import { type RemoteBridge, startRemoteBridge } from "./remote-bridge.js";
import { type RemoteEmulator, startRemoteEmulator } from "./remote-emulator.js";

/** A running benchmark setup. */
export interface BenchStack {
  emulator: RemoteEmulator;
  bridge: RemoteBridge;
  direct: DirectClient;
  close(): Promise<void>;
}

/** Starts emulator (child process) + bridge (child process) + direct client (this process). */
export async function startBenchStack(emulatorOptions: EmulatorOptions): Promise<BenchStack> {
  const emulator = await startRemoteEmulator({ heartbeatIntervalMs: 1000, ...emulatorOptions });
  const bridge = await startRemoteBridge(emulator.url, emulator.accessToken);
  const direct = createDirectClient(emulator.url, emulator.accessToken);
  return {
    emulator,
    bridge,
    direct,
    async close() {
      await bridge.close();
      await emulator.close();
    },
  };
}

/** A fresh conversation id for the direct client. */
export function newConversationId(): string {
  return crypto.randomUUID();
}
