/**
 * A Cursor usage limit (`[[emu:error usage_limit]]`) as the real clients show it: the bridge's own message (the
 * limit, and when it resets or that Cursor did not say) within 10 s of the turn reaching Cursor, after one request.
 * OpenCode with a provider block and with the plugin (it retried every 429 for about 80 s), Codex (it replaced the
 * message with its own "Quota exceeded"), and Claude Code with its default retries. The SDKs are covered by
 * test/server/actionable-errors.test.ts (openai, AI SDK) and test/server/anthropic-sdk.test.ts.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type ClientRun, clientDiagnostics, runClient } from "./support/client-process.js";
import {
  type OpenCodeRun,
  openCodeRunArgs,
  openCodeSettings,
  providerBlockEnv,
  runOpenCode,
} from "./support/opencode.js";
import { emulatorStats, pluginEnv, pluginSkipReason, useStandaloneEmulator } from "./support/plugin-env.js";
import { useServedBridge } from "./support/served-bridge.js";
import { clientBin, ensureTestClients } from "./support/test-clients.js";

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

const diagnostics = (result: ClientRun) => clientDiagnostics(result, { stdoutChars: 6000 });

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
function openCodeError(run: OpenCodeRun): string {
  const errors = run.events.filter((event) => event.type === "error");
  return errors.map((event) => event.error?.data?.message ?? "").join("\n");
}

describe.skipIf(reason !== undefined)("usage limit → real clients (provider block, Codex, Claude Code)", () => {
  const bridge = useServedBridge("usage-limit");
  const workDir = (name: string) => bridge.home.folder(name);

  it(
    "OpenCode (provider block) shows the bridge's message after one request, within 10 s",
    async () => {
      const statsUrl = bridge.emulator.url;
      const models = { [MAIN_MODEL]: {}, [TITLE_MODEL]: {} };
      const env = await providerBlockEnv(bridge.home, bridge.baseURL, models, { main: MAIN_MODEL, small: TITLE_MODEL });
      const before = (await emulatorStats(statsUrl)).turns.length;
      const result = await runOpenCode(openCodeRunArgs(`bridge/${MAIN_MODEL}`, LIMIT_WORDS), {
        cwd: workDir("opencode"),
        env,
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
      const statsUrl = bridge.emulator.url;
      const codexHome = workDir("codex-home");
      const tmp = workDir("codex-tmp");
      const provider = `model_providers.bridge={name="bridge",base_url="${bridge.baseURL}",env_key="E2E_KEY",wire_api="responses"}`;
      const args = ["exec", "--skip-git-repo-check", "--ephemeral", "--json", "--disable", "plugins"];
      args.push("--disable", "unbounded_connection_retries", "-c", "check_for_update_on_startup=false");
      args.push("-c", "analytics.enabled=false", "-c", `model=${MAIN_MODEL}`, "-c", "model_provider=bridge");
      args.push("-c", provider, LIMIT_WORDS.join(" "));
      const before = (await emulatorStats(statsUrl)).turns.length;
      const env = { ...bridge.home.env, CODEX_HOME: codexHome, TMPDIR: tmp, E2E_KEY: "e2e" };
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
      const statsUrl = bridge.emulator.url;
      const env = {
        ...bridge.home.env,
        TMPDIR: workDir("claude-tmp"),
        ANTHROPIC_BASE_URL: bridge.baseURL.replace(/\/v1$/, ""),
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
  const emulator = useStandaloneEmulator(apiKey, "usage-limit-plugin");

  it(
    "shows the bridge's message after one request, within 10 s",
    async () => {
      const plugin = [new URL("../..", import.meta.url).href.replace(/\/$/, "")];
      const settings = openCodeSettings(`cursor/${MAIN_MODEL}`, `cursor/${TITLE_MODEL}`, { plugin });
      const env = pluginEnv(emulator.home, emulator.url, apiKey, settings);
      const cwd = emulator.home.folder("project");
      const before = (await emulator.stats()).turns.length;
      const result = await runOpenCode(openCodeRunArgs(`cursor/${MAIN_MODEL}`, LIMIT_WORDS), { cwd, env });
      const exitedAt = Date.now();
      expect(result.code, diagnostics(result)).not.toBe(0);
      expect(openCodeError(result), diagnostics(result)).toMatch(SHOWN);
      expect(await mainTurns(emulator.url, before, MAIN_MODEL), "OpenCode retried the usage limit").toBe(1);
      expect(await shownAfterMs(emulator.url, before, MAIN_MODEL, exitedAt)).toBeLessThan(10_000);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
