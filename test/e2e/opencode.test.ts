import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort, runClient } from "./support/client-process.js";
import { createTempHome, type ServedBridge, startServedBridge, type TempHome } from "./support/served-bridge.js";
import { OPENCODE_BINARY, OPENCODE_OFFLINE_ENV, openCodeSkipReason } from "./support/test-clients.js";

const BINARY = OPENCODE_BINARY;
const MAIN_MODEL = "composer-1";
const TITLE_MODEL = "claude-4.5-sonnet";
const RUN_TIMEOUT_MS = 150_000;

const reason = await openCodeSkipReason();
if (reason !== undefined) console.log(`skipping the OpenCode end-to-end test: ${reason}`);

function openCodeConfig(baseURL: string): string {
  const model = (name: string) => ({ name, tool_call: true });
  return JSON.stringify({
    provider: {
      bridge: {
        npm: "@ai-sdk/openai-compatible",
        name: "cursor-bridge",
        options: { baseURL, apiKey: "e2e" },
        models: { [MAIN_MODEL]: model(MAIN_MODEL), [TITLE_MODEL]: model(TITLE_MODEL) },
      },
    },
    model: `bridge/${MAIN_MODEL}`,
    small_model: `bridge/${TITLE_MODEL}`,
    autoupdate: false,
    share: "disabled",
    permission: { bash: "allow", read: "allow", edit: "deny", webfetch: "deny" },
  });
}

/** One `--format json` event line. */
interface OpenCodeEvent {
  type: string;
  part?: {
    type?: string;
    text?: string;
    tool?: string;
    reason?: string;
    state?: { status?: string; output?: string; input?: unknown };
  };
}

async function runOpenCode(
  home: TempHome,
  env: Record<string, string>,
  words: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const cwd = join(home.dir, "project");
  mkdirSync(cwd, { recursive: true });
  const args = ["run", "-m", `bridge/${MAIN_MODEL}`, "--format", "json", ...words];
  const result = await runClient(BINARY, args, { cwd, env, timeoutMs: RUN_TIMEOUT_MS });
  return { code: result.code ?? 1, stdout: result.stdout, stderr: result.stderr };
}

describe.skipIf(reason !== undefined)("OpenCode → cursor-bridge serve → emulator", () => {
  let served: ServedBridge;
  let home: TempHome;

  beforeAll(async () => {
    served = await startServedBridge();
    home = createTempHome("opencode");
  });
  afterAll(async () => {
    await served?.close();
    home?.remove();
  });

  it(
    "runs bash through OpenCode on one Cursor Run and answers with its output",
    async () => {
      const nonce = `nonce-${randomBytes(6).toString("hex")}`;
      const env = {
        ...home.env,
        OPENCODE_CONFIG_CONTENT: openCodeConfig(served.baseURL),
        ...OPENCODE_OFFLINE_ENV,
        npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
      };
      // One argument, as users type it: `opencode run` wraps an argument holding a space in quotes and writes each `"`
      // inside as `\"`; the emulator undoes that quoting. OpenCode 1.18's bash tool requires only `command`.
      const prompt = `Print the nonce [[emu:tool bash {"command":"echo ${nonce}"}]]`;
      served.emulator.resetStats();
      const result = await runOpenCode(home, env, [prompt]);
      const events = result.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as OpenCodeEvent);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);

      const bash = events.find((e) => e.type === "tool_use" && e.part?.tool === "bash");
      expect(bash?.part?.state?.status, diagnostics).toBe("completed");
      expect(bash?.part?.state?.output).toContain(nonce);
      const texts = events.filter((e) => e.type === "text").map((e) => e.part?.text ?? "");
      expect(texts.join("\n"), diagnostics).toContain(`bash returned: ${nonce}`);
      const finishes = events.filter((e) => e.type === "step_finish").map((e) => e.part?.reason);
      expect(finishes).toEqual(["tool-calls", "stop"]);

      const turns = served.emulator.stats().turns;
      const mainRuns = turns.filter((t) => t.model === MAIN_MODEL);
      expect(mainRuns, JSON.stringify(turns)).toHaveLength(1);
      expect(mainRuns[0]?.outcome).toBe("completed");
      expect(turns.filter((t) => t.model !== MAIN_MODEL).every((t) => t.model === TITLE_MODEL)).toBe(true);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
