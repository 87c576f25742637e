/**
 * A context overflow as real OpenCode 1.18.33 sees it (provider block): chat's 400 `context_length_exceeded` in
 * OpenAI's words on a request over half the model's window is OpenCode's own `ContextOverflowError` (the error its
 * compaction acts on), never an API error it retries or a usage limit. The prompt is piped on stdin: it is longer
 * than one command-line argument may be.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientRun, closedPort, runClient } from "./support/client-process.js";
import { emulatorStats } from "./support/plugin-env.js";
import { createTempHome, type ServedBridge, startServedBridge, type TempHome } from "./support/served-bridge.js";
import { ensureTestClients, OPENCODE_BINARY, OPENCODE_OFFLINE_ENV } from "./support/test-clients.js";

const MODEL = "composer-1";
const RUN_TIMEOUT_MS = 150_000;
const LONG_PROMPT = `${"lorem ipsum dolor ".repeat(27_000)} [[emu:overflow]]`;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the OpenCode context-overflow test: ${reason}`);

const diagnostics = (result: ClientRun) =>
  `exit ${result.code}\nstdout:\n${result.stdout.slice(-6000)}\nstderr:\n${result.stderr.slice(-3000)}`;

describe.skipIf(reason !== undefined)("context overflow → OpenCode", () => {
  let served: ServedBridge;
  let home: TempHome;
  beforeAll(async () => {
    served = await startServedBridge();
    home = createTempHome("context-overflow-opencode");
  });
  afterAll(async () => {
    await served?.close();
    home?.remove();
  });

  it(
    "OpenCode classifies the bridge's answer as its ContextOverflowError, not a retried API error",
    async () => {
      const dir = join(home.dir, "opencode");
      mkdirSync(dir, { recursive: true });
      const config = {
        provider: {
          bridge: {
            npm: "@ai-sdk/openai-compatible",
            name: "cursor-bridge",
            options: { baseURL: served.baseURL, apiKey: "e2e" },
            models: { [MODEL]: { name: MODEL, tool_call: true, limit: { context: 200_000, output: 8_000 } } },
          },
        },
        model: `bridge/${MODEL}`,
        small_model: `bridge/${MODEL}`,
        autoupdate: false,
        share: "disabled",
      };
      const env = {
        ...home.env,
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        ...OPENCODE_OFFLINE_ENV,
        npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
      };
      const before = (await emulatorStats(served.emulator.url)).turns.length;
      const result = await runClient(OPENCODE_BINARY, ["run", "-m", `bridge/${MODEL}`, "--format", "json"], {
        cwd: dir,
        env,
        timeoutMs: RUN_TIMEOUT_MS,
        stdin: LONG_PROMPT,
      });
      const errors = result.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { type: string; error?: { name?: string; data?: { message?: string } } })
        .filter((event) => event.type === "error");
      expect(errors.length, diagnostics(result)).toBeGreaterThan(0);
      for (const event of errors) {
        expect(event.error?.name, diagnostics(result)).toBe("ContextOverflowError");
        expect(event.error?.data?.message, diagnostics(result)).toMatch(
          /^This model's maximum context length is 200000 tokens\. However, your messages resulted in \d+ tokens\./,
        );
      }
      // It reached Cursor (the emulator), and OpenCode did not retry it as a transient API error (that would be 5+).
      const turns = (await emulatorStats(served.emulator.url)).turns.slice(before);
      expect(turns.length, diagnostics(result)).toBeGreaterThan(0);
      expect(turns.length, diagnostics(result)).toBeLessThan(5);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
