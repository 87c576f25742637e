/**
 * The benchmark's parent ↔ child protocol over the fork IPC channel: the parent asks (`{id, type}`), the child answers
 * (`{id, result}`). Used by the emulator child (bench/emulator-process.ts), so its stats and CPU are read where they
 * are spent. (serve itself is not a fork: bench/serve-process.ts reads it from /proc.)
 */
import { type ChildProcess, fork } from "node:child_process";

/** A child's answer to one request. */
interface Reply {
  id: number;
  result: unknown;
}

/** A forked benchmark child that answered `ready`. */
export interface Child<Ready> {
  readonly process: ChildProcess;
  readonly ready: Ready;
  ask<T>(type: string): Promise<T>;
  /** Asks `close`, then waits for the process to exit. */
  close(): Promise<void>;
}

/** Forks `entry` (a .ts file run through tsx) and waits for its first message. */
export async function forkChild<Ready>(
  entry: string,
  env: Record<string, string>,
  execArgv: readonly string[] = [],
): Promise<Child<Ready>> {
  const child = fork(entry, [], {
    execArgv: [...execArgv, "--import", import.meta.resolve("tsx")],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
    child.once("message", (message) => resolve(message as Ready));
  });
  child.removeAllListeners("exit");
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  child.on("message", (message: Reply) => {
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  });
  const ask = <T>(type: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (!child.connected) {
        reject(new Error(`${entry} is gone`));
        return;
      }
      const id = nextId++;
      pending.set(id, (result) => resolve(result as T));
      child.send({ id, type });
    });
  return {
    process: child,
    ready,
    ask,
    async close() {
      if (!child.connected) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      await ask<null>("close");
      await exited;
    },
  };
}

/**
 * Child side: answers the parent's requests with `handlers[type]()`. `close` runs `onClose`, answers, then ends the
 * process; the parent going away does the same.
 */
export function serveParent(handlers: Record<string, () => unknown>, onClose: () => Promise<void>): void {
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= onClose().catch(() => undefined);
    return closing;
  };
  process.on("message", (raw: { id: number; type: string }) => {
    if (raw.type === "close") {
      void close().then(() => {
        process.send?.({ id: raw.id, result: null }, () => process.exit(0));
      });
      return;
    }
    const handler = handlers[raw.type];
    void Promise.resolve(handler === undefined ? undefined : handler()).then((result) =>
      process.send?.({ id: raw.id, result: result ?? null }),
    );
  });
  process.on("disconnect", () => {
    void close().finally(() => process.exit(0));
  });
}
