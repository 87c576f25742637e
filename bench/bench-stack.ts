/**
 * The benchmark's setup: the emulator in a child process (bench/remote-emulator.ts), cursor-bridge in this process
 * (the same composition as the integration tests, test/support/stack.ts) and the direct baseline client on the same
 * emulator.
 */
import type { EmulatorOptions } from "../src/emulator/index.js";
import { type Stack, startStack } from "../test/support/stack.js";
import { createDirectClient, type DirectClient } from "./raw-driver.js";
import { type RemoteEmulator, startRemoteEmulator } from "./remote-emulator.js";

/** A running benchmark setup. */
export interface BenchStack {
  emulator: RemoteEmulator;
  bridge: Stack;
  direct: DirectClient;
  close(): Promise<void>;
}

/** Starts emulator (child process) + bridge + direct client. */
export async function startBenchStack(emulatorOptions: EmulatorOptions): Promise<BenchStack> {
  const emulator = await startRemoteEmulator({ heartbeatIntervalMs: 1000, ...emulatorOptions });
  const bridge = await startStack({
    existingEmulator: emulator.asEmulator,
    transport: "http2",
    // Long enough for the memory scenario to hold 1,000 parked turns while it measures.
    parkedTurnTtlMs: 10 * 60_000,
    stallTimeoutMs: 60_000,
  });
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
