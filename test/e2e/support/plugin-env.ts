/**
 * What the OpenCode plugin's end-to-end tests share: the reason to skip them (OpenCode installs
 * `@opencode-ai/plugin` from the npm registry before it loads any plugin, and hangs without one), a standalone
 * `cursor-bridge emulator` process the plugin's bridge child reaches through CURSOR_API_URL, and its statistics.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openCodeSkipReason } from "./test-clients.js";

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
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`emulator did not start; stderr:\n${stderr}`)), 30_000);
    child.stdout?.setEncoding("utf8").on("data", (part: string) => {
      out += part;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      resolve(match[1]);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`emulator exited with ${code}; stderr:\n${stderr}`));
    });
  });
  return { url, process: child };
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
