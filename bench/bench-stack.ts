/**
 * The benchmark's setup: three processes. The emulator (bench/emulator-process.ts) and `cursor-bridge serve` as
 * shipped (bench/serve-process.ts: file store in a throwaway data dir, logged in to the emulator) each run in a child
 * process; this process is the load generator, driving serve over HTTP and the emulator directly with the baseline
 * connect-es client (the physical limit: what talking to Cursor directly costs).
 */
import type { EmulatorOptions } from "../src/emulator/index.js";
import { createDirectClient, type DirectClient } from "./raw-driver.js";
import { type RemoteEmulator, startRemoteEmulator } from "./remote-emulator.js";
import { type ServeProcess, startServe } from "./serve-process.js";

/** A running benchmark setup. */
export interface BenchStack {
  emulator: RemoteEmulator;
  bridge: ServeProcess;
  direct: DirectClient;
  close(): Promise<void>;
}

/** What differs between two stacks of one scenario (e.g. a gateway with keys on and off). */
export interface StackOptions {
  /** Extra `serve` arguments. */
  serveArgs?: readonly string[];
  /** Preload the GC hook into serve (the memory scenario only; bench/serve-process.ts). */
  gcHook?: "collect" | "read";
}

/** Starts emulator (child process) + serve (child process) + direct client (this process). */
export async function startBenchStack(
  /** `toolCallCount: false`: the emulator's switch that stops it sending call_count (bench/tool-trips.ts). */
  emulatorOptions: EmulatorOptions & { toolCallCount?: boolean },
  stackOptions: StackOptions = {},
): Promise<BenchStack> {
  const emulator = await startRemoteEmulator({ heartbeatIntervalMs: 1000, ...emulatorOptions });
  let bridge: ServeProcess;
  try {
    bridge = await startServe({ emulatorUrl: emulator.url, ...stackOptions });
  } catch (error) {
    await emulator.close();
    throw error;
  }
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

/**
 * A second serve on the running stack's emulator (e.g. the same bridge with other arguments, side by side in one
 * run); the caller closes it.
 */
export function startAnotherServe(stack: BenchStack, stackOptions: StackOptions): Promise<ServeProcess> {
  return startServe({ emulatorUrl: stack.emulator.url, ...stackOptions });
}

/** A fresh conversation id for the direct client. */
export function newConversationId(): string {
  return crypto.randomUUID();
}
