/**
 * A Cursor usage limit (`[[emu:error usage_limit]]`) as the real clients show it: the bridge's own message (the
 * limit, and when it resets or that Cursor did not say) within 10 s of the turn reaching Cursor, after one request.
 * OpenCode with a provider block and with the plugin (it retried every 429 for about 80 s), Codex (it replaced the
 * message with its own "Quota exceeded"), and Claude Code with its default retries. The SDKs are covered by
 * test/server/actionable-errors.test.ts (openai, AI SDK) and test/server/anthropic-sdk.test.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientRun, closedPort, runClient } from "./support/client-process.js";
import { emulatorStats, pluginSkipReason, startStandaloneEmulator } from "./support/plugin-env.js";
import { createTempHome, type ServedBridge, startServedBridge, type TempHome } from "./support/served-bridge.js";
import { clientBin, ensureTestClients, OPENCODE_BINARY, OPENCODE_OFFLINE_ENV } from "./support/test-clients.js";

const MAIN_MODEL = "composer-1";
const TITLE_MODEL = "claude-4.5-sonnet";
const RUN_TIMEOUT_MS = 150_000;
/** Words of the prompt: `opencode run` quotes an argument holding a space. */
const LIMIT_WORDS = ["[[emu:error", "usage_limit]]"];
/** What every client must show: the bridge's message, naming the limit and the reset. */
const SHOWN = /Cursor usage limit reached \(plan usage limit\).*(resets at|did not say when it resets)/;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the usage-limit end-to-end tests: ${reason}`);
const pluginReason = reason ?? (await pluginSkipReason());
if (pluginReason !== undefined) console.log(`skipping the plugin usage-limit test: ${pluginReason}`);

const diagnostics = (result: ClientRun) =>
  `exit ${result.code}\nstdout:\n${result.stdout.slice(-6000)}\nstderr:\n${result.stderr.slice(-4000)}`;

/** How long after the first turn of `model` reached Cursor the client had exited (it printed the error before). */
async function shownAfterMs(statsUrl: string, before: number, model: string, exitedAt: number): Promise<number> {
  const turns = (await emulatorStats(statsUrl)).turns.slice(before) as Array<{ model: string; startedAt?: number }>;
  const first = turns.find((turn) => turn.model === model);
  expect(first?.startedAt, JSON.stringify(turns)).toBeTypeOf("number");
  return exitedAt - (first?.startedAt ?? 0);
}

async function mainTurns(statsUrl: string, before: number, model: string): Promise<number> {
  return (await emulatorStats(statsUrl)).turns.slice(before).filter((turn) => turn.model === model).length;
}

/** OpenCode's `--format json` error event text. */
function openCodeError(result: ClientRun): string {
  const errors = result.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type: string; error?: { name?: string; data?: { message?: string } } })
    .filter((event) => event.type === "error");
  return errors.map((event) => event.error?.data?.message ?? "").join("\n");
}

describe.skipIf(reason !== undefined)("usage limit → real clients (provider block, Codex, Claude Code)", () => {
  let served: ServedBridge;
  let home: TempHome;
  let statsUrl: string;

  beforeAll(async () => {
    served = await startServedBridge();
    home = createTempHome("usage-limit");
    statsUrl = served.emulator.url;
  });
  afterAll(async () => {
    await served?.close();
    home?.remove();
  });

  const workDir = (name: string) => {
    const dir = join(home.dir, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  it(
    "OpenCode (provider block) shows the bridge's message after one request, within 10 s",
    async () => {
      const model = (name: string) => ({ name, tool_call: true });
      const config = {
        provider: {
          bridge: {
            npm: "@ai-sdk/openai-compatible",
            name: "cursor-bridge",
            options: { baseURL: served.baseURL, apiKey: "e2e" },
            models: { [MAIN_MODEL]: model(MAIN_MODEL), [TITLE_MODEL]: model(TITLE_MODEL) },
          },
        },
        model: `bridge/${MAIN_MODEL}`,
        small_model: `bridge/${TITLE_MODEL}`,
        autoupdate: false,
        share: "disabled",
      };
      const env = {
        ...home.env,
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        ...OPENCODE_OFFLINE_ENV,
        npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
      };
      const before = (await emulatorStats(statsUrl)).turns.length;
      const args = ["run", "-m", `bridge/${MAIN_MODEL}`, "--format", "json", ...LIMIT_WORDS];
      const result = await runClient(OPENCODE_BINARY, args, {
        cwd: workDir("opencode"),
        env,
        timeoutMs: RUN_TIMEOUT_MS,
      });
      const exitedAt = Date.now();
      expect(result.code, diagnostics(result)).not.toBe(0);
      expect(openCodeError(result), diagnostics(result)).toMatch(SHOWN);
      expect(await mainTurns(statsUrl, before, MAIN_MODEL), "OpenCode retried the usage limit").toBe(1);
      expect(await shownAfterMs(statsUrl, before, MAIN_MODEL, exitedAt)).toBeLessThan(10_000);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "Codex shows the bridge's message (not its own 'Quota exceeded') after one request",
    async () => {
      const codexHome = workDir("codex-home");
      const tmp = workDir("codex-tmp");
      const provider = `model_providers.bridge={name="bridge",base_url="${served.baseURL}",env_key="E2E_KEY",wire_api="responses"}`;
      const args = ["exec", "--skip-git-repo-check", "--ephemeral", "--json", "--disable", "plugins"];
      args.push("--disable", "unbounded_connection_retries", "-c", "check_for_update_on_startup=false");
      args.push("-c", "analytics.enabled=false", "-c", `model=${MAIN_MODEL}`, "-c", "model_provider=bridge");
      args.push("-c", provider, LIMIT_WORDS.join(" "));
      const before = (await emulatorStats(statsUrl)).turns.length;
      const env = { ...home.env, CODEX_HOME: codexHome, TMPDIR: tmp, E2E_KEY: "e2e" };
      const result = await runClient(clientBin("codex"), args, {
        cwd: workDir("codex"),
        env,
        timeoutMs: RUN_TIMEOUT_MS,
      });
      const exitedAt = Date.now();
      expect(result.code, diagnostics(result)).not.toBe(0);
      const failed = result.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { type: string; error?: { message?: string } })
        .find((event) => event.type === "turn.failed");
      expect(failed?.error?.message, diagnostics(result)).toMatch(SHOWN);
      expect(result.stdout).not.toContain("Quota exceeded");
      expect(await mainTurns(statsUrl, before, MAIN_MODEL), "Codex retried the usage limit").toBe(1);
      expect(await shownAfterMs(statsUrl, before, MAIN_MODEL, exitedAt)).toBeLessThan(10_000);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "Claude Code (default retries) shows the bridge's message after one request",
    async () => {
      const env = {
        ...home.env,
        TMPDIR: workDir("claude-tmp"),
        ANTHROPIC_BASE_URL: served.baseURL.replace(/\/v1$/, ""),
        ANTHROPIC_API_KEY: "e2e",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      };
      const args = ["-p", LIMIT_WORDS.join(" "), "--output-format", "stream-json", "--verbose", "--max-turns", "2"];
      const before = (await emulatorStats(statsUrl)).turns.length;
      const result = await runClient(clientBin("claude"), [...args, "--model", MAIN_MODEL], {
        cwd: workDir("claude"),
        env,
        timeoutMs: RUN_TIMEOUT_MS,
      });
      const exitedAt = Date.now();
      const last = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as {
        is_error?: boolean;
        result?: string;
      };
      expect(last.is_error, diagnostics(result)).toBe(true);
      expect(last.result, diagnostics(result)).toMatch(SHOWN);
      expect(await mainTurns(statsUrl, before, MAIN_MODEL), "Claude Code retried the usage limit").toBe(1);
      expect(await shownAfterMs(statsUrl, before, MAIN_MODEL, exitedAt)).toBeLessThan(10_000);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});

describe.skipIf(pluginReason !== undefined)("usage limit → OpenCode with the cursor-bridge plugin", () => {
  const apiKey = `e2e-key-${randomBytes(6).toString("hex")}`;
  let emulator: Awaited<ReturnType<typeof startStandaloneEmulator>>;
  let home: TempHome;

  beforeAll(async () => {
    emulator = await startStandaloneEmulator(apiKey);
    home = createTempHome("usage-limit-plugin");
  }, 60_000);
  afterAll(() => {
    emulator?.process.kill("SIGTERM");
    home?.remove();
  });

  it(
    "shows the bridge's message after one request, within 10 s",
    async () => {
      const env = {
        ...home.env,
        CURSOR_API_URL: emulator.url,
        OPENCODE_AUTH_CONTENT: JSON.stringify({ cursor: { type: "api", key: apiKey } }),
        OPENCODE_CONFIG_CONTENT: JSON.stringify({
          plugin: [new URL("../..", import.meta.url).href.replace(/\/$/, "")],
          model: `cursor/${MAIN_MODEL}`,
          small_model: `cursor/${TITLE_MODEL}`,
          autoupdate: false,
          share: "disabled",
        }),
        ...OPENCODE_OFFLINE_ENV,
      };
      const cwd = join(home.dir, "project");
      mkdirSync(cwd, { recursive: true });
      const before = (await emulatorStats(emulator.url)).turns.length;
      const args = ["run", "-m", `cursor/${MAIN_MODEL}`, "--format", "json", ...LIMIT_WORDS];
      const result = await runClient(OPENCODE_BINARY, args, { cwd, env, timeoutMs: RUN_TIMEOUT_MS });
      const exitedAt = Date.now();
      expect(result.code, diagnostics(result)).not.toBe(0);
      expect(openCodeError(result), diagnostics(result)).toMatch(SHOWN);
      expect(await mainTurns(emulator.url, before, MAIN_MODEL), "OpenCode retried the usage limit").toBe(1);
      expect(await shownAfterMs(emulator.url, before, MAIN_MODEL, exitedAt)).toBeLessThan(10_000);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
