/**
 * The benchmark's parent ↔ child protocol over the fork IPC channel: the parent asks (`{id, type}`), the child answers
 * (`{id, result}`). Used by the emulator child (bench/emulator-process.ts), so its stats and CPU are read where they
 * are spent. (serve itself is not a fork: bench/serve-process.ts reads it from /proc.)
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";

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
  return startedChild<Ready>(
    entry,
    fork(entry, [], {
      execArgv: [...execArgv, "--import", import.meta.resolve("tsx")],
      env: { ...process.env, ...env },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
}

/**
 * Forks `entry` (a .ts file) the way serve runs: bundled into one JavaScript file first (esbuild, as dist/ is built)
 * and started with plain `node`, no tsx and no node options, so the child's start (what it loads, and V8's young
 * generation, which a tsx start grows) is that of a shipped program. Waits for its first message; the bundle is
 * removed once the child has exited.
 */
export async function forkBuiltChild<Ready>(entry: string, env: Record<string, string>): Promise<Child<Ready>> {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-bench-child-"));
  const outfile = join(dir, "child.mjs");
  try {
    buildSync({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile,
      logLevel: "error",
      // A bundled ESM file has no `require`; some CommonJS dependencies call it for Node's own modules.
      banner: {
        js: 'import { createRequire as __benchRequire } from "node:module"; const require = __benchRequire(import.meta.url);',
      },
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const child = fork(outfile, [], {
    execArgv: [],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  child.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return startedChild<Ready>(entry, child);
}

async function startedChild<Ready>(entry: string, child: ChildProcess): Promise<Child<Ready>> {
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
