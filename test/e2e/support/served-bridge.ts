/**
 * `cursor-bridge serve` as its users run it: the real CLI (bin/cursor-bridge.js) in a child process with its own
 * temporary HOME and XDG directories and a minimal environment, pointed at an in-process emulator (so tests can read
 * the emulator's statistics) with `--upstream cursor` and the emulator's access token in CURSOR_ACCESS_TOKEN.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { type Emulator, type EmulatorOptions, startEmulator } from "../../../src/emulator/index.js";

const BIN = fileURLToPath(new URL("../../../bin/cursor-bridge.js", import.meta.url));
const START_TIMEOUT_MS = 30_000;

/** A running `cursor-bridge serve` with its emulator upstream. */
export interface ServedBridge {
  emulator: Emulator;
  /** `http://127.0.0.1:PORT/v1` */
  baseURL: string;
  close(): Promise<void>;
}

/** A throwaway HOME with the four XDG base directories inside it. */
export interface TempHome {
  dir: string;
  /** HOME, XDG_* and a few harmless variables (PATH, LANG, TMPDIR); nothing else from this process. */
  env: Record<string, string>;
  /** Makes (if need be) the folder `name` inside the HOME and returns its path: a project folder for a client. */
  folder(name: string): string;
  remove(): void;
}

/** Creates a temporary HOME (prefix names the client using it). */
export function createTempHome(prefix: string): TempHome {
  const dir = mkdtempSync(join(tmpdir(), `cursor-bridge-e2e-${prefix}-`));
  const xdg = { XDG_CONFIG_HOME: "config", XDG_DATA_HOME: "data", XDG_CACHE_HOME: "cache", XDG_STATE_HOME: "state" };
  const env: Record<string, string> = { HOME: dir };
  for (const [name, sub] of Object.entries(xdg)) {
    env[name] = join(dir, sub);
    mkdirSync(env[name], { recursive: true });
  }
  for (const name of ["PATH", "LANG", "TMPDIR", "SystemRoot"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const folder = (name: string) => {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    return path;
  };
  // A client's own processes may outlive its run by a moment (acpx's queue owner keeps its agent for `--ttl`) and
  // still write into the HOME: a file they add mid-removal fails it with ENOTEMPTY, which rmSync retries.
  const remove = () => rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  return { dir, env, folder, remove };
}

function waitForUrl(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`serve did not start in time; stderr:\n${stderr()}`)),
      START_TIMEOUT_MS,
    );
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (part: string) => {
      out += part;
      const line = out.split("\n")[0];
      if (!out.includes("\n") || line === undefined) return;
      clearTimeout(timer);
      try {
        resolve((JSON.parse(line) as { url: string }).url);
      } catch {
        reject(new Error(`unexpected first line from serve: ${line}`));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}; stderr:\n${stderr()}`));
    });
  });
}

/** Starts an emulator and `cursor-bridge serve` against it (`serveEnv` adds variables, e.g. CURSOR_BRIDGE_API_KEY). */
export async function startServedBridge(
  emulatorOptions: EmulatorOptions = {},
  serveEnv: Record<string, string> = {},
): Promise<ServedBridge> {
  const emulator = await startEmulator({ port: 0, ...emulatorOptions });
  const home = createTempHome("serve");
  const args = [
    "serve",
    "--upstream",
    "cursor",
    "--cursor-api-url",
    emulator.url,
    "--port",
    "0",
    "--json",
    "--log-level",
    "warn",
  ];
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: home.dir,
    env: { ...home.env, ...serveEnv, CURSOR_ACCESS_TOKEN: emulator.issueTokens().accessToken },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (part: string) => (stderr += part));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    await emulator.close();
    home.remove();
  };
  try {
    const baseURL = await waitForUrl(child, () => stderr);
    return { emulator, baseURL, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * For the describe block it is called in: `start` in a `beforeAll` (within `timeoutMs`, vitest's hook timeout unless
 * told), `stop` on what it made in an `afterAll`. The function it returns reads what `start` made.
 */
export function useStarted<T>(
  start: () => Promise<T>,
  stop: (started: T) => Promise<void> | void,
  timeoutMs?: number,
): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  }, timeoutMs);
  afterAll(async () => {
    if (started !== undefined) await stop(started);
  });
  return () => {
    if (started === undefined) throw new Error("a fixture is read before its beforeAll ran");
    return started;
  };
}

/** What the tests of a describe block read from {@link useServedBridge} once its `beforeAll` has run. */
export interface ServedBridgeFixture {
  readonly emulator: Emulator;
  /** `http://127.0.0.1:PORT/v1` */
  readonly baseURL: string;
  /** The clients' own temporary HOME (not the one `serve` runs in). */
  readonly home: TempHome;
}

/**
 * For the describe block it is called in: before its tests, an emulator and `cursor-bridge serve` against it
 * ({@link startServedBridge}) and a temporary HOME for the clients (`prefix` names it, {@link createTempHome}); after
 * them, both stopped and removed.
 */
export function useServedBridge(prefix: string, emulatorOptions: EmulatorOptions = {}): ServedBridgeFixture {
  const started = useStarted(
    async () => ({ served: await startServedBridge(emulatorOptions), home: createTempHome(prefix) }),
    async ({ served, home }) => {
      await served.close();
      home.remove();
    },
  );
  return {
    get emulator() {
      return started().served.emulator;
    },
    get baseURL() {
      return started().served.baseURL;
    },
    get home() {
      return started().home;
    },
  };
}
