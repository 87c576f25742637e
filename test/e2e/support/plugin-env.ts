/**
 * What the OpenCode plugin's end-to-end tests share: the reason to skip them (OpenCode installs
 * `@opencode-ai/plugin` from the npm registry before it loads any plugin, and hangs without one), a standalone
 * `cursor-bridge emulator` process the plugin's bridge child reaches through CURSOR_API_URL, and its statistics.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { listeningOrigin } from "../../support/processes.js";
import { type ClientRun, runClient } from "./client-process.js";
import { createTempHome, type TempHome, useStarted } from "./served-bridge.js";
import { OPENCODE_OFFLINE_ENV, openCodeSkipReason } from "./test-clients.js";

const BIN = fileURLToPath(new URL("../../../bin/cursor-bridge.js", import.meta.url));

/** Why the plugin tests cannot run here, or undefined; a missing registry fails them under CI=true. */
export async function pluginSkipReason(): Promise<string | undefined> {
  const clients = await openCodeSkipReason();
  if (clients !== undefined) return clients;
  const registry = (process.env.npm_config_registry ?? "https://registry.npmjs.org").replace(/\/+$/, "");
  const reachable = await fetch(`${registry}/@opencode-ai%2fplugin`, {
    method: "HEAD",
    signal: AbortSignal.timeout(15_000),
  })
    .then(() => true)
    .catch(() => false);
  if (!reachable) {
    const why = `the npm registry (${registry}) is unreachable, and OpenCode installs @opencode-ai/plugin from it`;
    if (process.env.CI === "true") throw new Error(why);
    return why;
  }
  return undefined;
}

/** `cursor-bridge emulator --api-key KEY --port 0` in its own process. */
export async function startStandaloneEmulator(apiKey: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, "emulator", "--port", "0", "--api-key", apiKey], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (part: string) => (stderr += part));
  try {
    return { url: await listeningOrigin(child, "emulator", () => stderr, 30_000), process: child };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

/** What the tests of a describe block read from {@link useStandaloneEmulator} once its `beforeAll` has run. */
export interface StandaloneEmulatorFixture {
  /** The emulator's origin. */
  readonly url: string;
  /** OpenCode's temporary HOME. */
  readonly home: TempHome;
  /** The emulator's `GET /emulator/stats`. */
  stats(): Promise<EmulatorStats>;
}

/**
 * For the describe block it is called in: before its tests, a standalone emulator that takes `apiKey`
 * ({@link startStandaloneEmulator}) and a temporary HOME for OpenCode (`prefix` names it); after them, both gone.
 */
export function useStandaloneEmulator(apiKey: string, prefix: string): StandaloneEmulatorFixture {
  const started = useStarted(
    async () => ({ emulator: await startStandaloneEmulator(apiKey), home: createTempHome(prefix) }),
    ({ emulator, home }) => {
      emulator.process.kill("SIGTERM");
      home.remove();
    },
    60_000,
  );
  return {
    get url() {
      return started().emulator.url;
    },
    get home() {
      return started().home;
    },
    stats: () => emulatorStats(started().emulator.url),
  };
}

/**
 * `cursor-bridge setup opencode-plugin --write` in `home`, as docs/clients.md tells users: the plugin entry in the
 * global opencode.json.
 */
export function setupPlugin(home: TempHome): Promise<ClientRun> {
  return runClient(process.execPath, [BIN, "setup", "opencode-plugin", "--write"], {
    cwd: home.dir,
    env: { ...home.env, NO_COLOR: "1" },
    timeoutMs: 60_000,
  });
}

/**
 * OpenCode's environment with the plugin: the temporary HOME, the plugin's Cursor at `emulatorUrl`, an API-key
 * credential for provider cursor, `settings` as the config (openCodeSettings in opencode.ts), OpenCode offline.
 */
export function pluginEnv(
  home: TempHome,
  emulatorUrl: string,
  apiKey: string,
  settings: Record<string, unknown>,
): Record<string, string> {
  return {
    ...home.env,
    CURSOR_API_URL: emulatorUrl,
    OPENCODE_AUTH_CONTENT: JSON.stringify({ cursor: { type: "api", key: apiKey } }),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(settings),
    ...OPENCODE_OFFLINE_ENV,
  };
}

/** The emulator's `GET /emulator/stats`. */
export interface EmulatorStats {
  runs: number;
  turns: Array<{ model: string; conversationId: string; outcome?: string }>;
}

export async function emulatorStats(url: string): Promise<EmulatorStats> {
  const response = await fetch(`${url}/emulator/stats`);
  return (await response.json()) as EmulatorStats;
}
