import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClient } from "./support/client-process.js";
import { createTempHome, type ServedBridge, startServedBridge, type TempHome } from "./support/served-bridge.js";
import { clientBin, ensureTestClients } from "./support/test-clients.js";

const MODEL = "composer-1";
/** A parameterised model of the emulator's catalogue (reasoning none…extra-high, fast). */
const REASONING_MODEL = "gpt-5.5";
/** A model of the emulator's catalogue whose effort tops at `max`. */
const MAX_MODEL = "claude-opus-4-8";
/** A flat id (no parameters) listed beside its tier ids (`gpt-5.3-codex-high`…). */
const FLAT_MODEL = "gpt-5.3-codex";
const RUN_TIMEOUT_MS = 90_000;
const INSTALL_TIMEOUT_MS = 16 * 60_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(home: TempHome, args: string[], cwd: string): Promise<Run> {
  const env = {
    ...home.env,
    CODEX_HOME: join(home.dir, "codex-home"),
    TMPDIR: join(home.dir, "tmp"),
    MOCK_KEY: "e2e",
  };
  mkdirSync(env.CODEX_HOME, { recursive: true });
  mkdirSync(env.TMPDIR, { recursive: true });
  const result = await runClient(clientBin("codex"), args, { cwd, env, timeoutMs: RUN_TIMEOUT_MS });
  return { code: result.code ?? 1, stdout: result.stdout, stderr: result.stderr };
}

function execArgs(baseURL: string, catalog: string, prompt: string, model = MODEL): string[] {
  const provider = `{name="bridge",base_url="${baseURL}",env_key="MOCK_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`;
  return [
    "exec",
    "--skip-git-repo-check",
    "--ephemeral",
    "--dangerously-bypass-approvals-and-sandbox",
    "--json",
    "--disable",
    "plugins",
    "--disable",
    "unbounded_connection_retries",
    "-c",
    "analytics.enabled=false",
    "-c",
    "check_for_update_on_startup=false",
    "-c",
    `model=${model}`,
    "-c",
    "model_provider=bridge",
    "-c",
    `model_catalog_json=${catalog}`,
    "-c",
    `model_providers.bridge=${provider}`,
    prompt,
  ];
}

/** Codex's bundled catalog entry of a freeform-`apply_patch` model, renamed to the emulator's model. */
async function writeCatalog(home: TempHome): Promise<string> {
  const listed = await run(home, ["debug", "models"], home.dir);
  type Entry = { slug: string; apply_patch_tool_type?: string; tool_mode?: string | null };
  const catalog = JSON.parse(listed.stdout) as { models: Entry[] };
  const freeform = catalog.models.filter((model) => model.apply_patch_tool_type === "freeform");
  const entry = freeform.find((model) => model.tool_mode == null) ?? freeform[0];
  if (entry === undefined) throw new Error(`no freeform apply_patch model in Codex's catalog: ${listed.stderr}`);
  const file = join(home.dir, "catalog.json");
  // tool_mode null: the plain tool set (a `code_mode_only` entry would hide exec_command behind code mode).
  const models = [MODEL, REASONING_MODEL, MAX_MODEL, FLAT_MODEL].map((slug) => ({
    ...entry,
    slug,
    display_name: slug,
    tool_mode: null,
  }));
  writeFileSync(file, JSON.stringify({ models }));
  return file;
}

interface CodexEvent {
  type: string;
  item?: { type?: string; text?: string; aggregated_output?: string; exit_code?: number | null; status?: string };
}

function events(stdout: string): CodexEvent[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as CodexEvent);
}

let skip: string | undefined;

describe("Codex CLI → cursor-bridge serve (/v1/responses) → emulator", () => {
  let served: ServedBridge;
  let home: TempHome;
  let catalog: string;

  beforeAll(async () => {
    skip = await ensureTestClients();
    if (skip !== undefined) {
      console.log(`skipping the Codex end-to-end tests: ${skip}`);
      return;
    }
    served = await startServedBridge();
    home = createTempHome("codex");
    catalog = await writeCatalog(home);
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await served?.close();
    home?.remove();
  });

  it(
    "runs exec_command for real on one Cursor Run and answers with its output",
    async (context) => {
      if (skip !== undefined) context.skip();
      const nonce = `nonce-${randomBytes(6).toString("hex")}`;
      const cwd = join(home.dir, "echo");
      mkdirSync(cwd, { recursive: true });
      served.emulator.resetStats();
      const prompt = `Print the nonce [[emu:tool exec_command {"cmd":"echo ${nonce}"}]]`;
      const result = await run(home, execArgs(served.baseURL, catalog, prompt), cwd);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      const all = events(result.stdout);
      const command = all.find((e) => e.item?.type === "command_execution" && e.type === "item.completed");
      expect(command?.item?.exit_code, diagnostics).toBe(0);
      expect(command?.item?.aggregated_output).toContain(nonce);
      const messages = all.filter((e) => e.item?.type === "agent_message").map((e) => e.item?.text ?? "");
      expect(messages.at(-1), diagnostics).toContain("exec_command returned:");
      expect(messages.at(-1)).toContain(nonce);
      expect(all.some((e) => e.type === "turn.completed")).toBe(true);
      const turns = served.emulator.stats().turns;
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "-c model_reasoning_effort=high reaches Cursor as the model's reasoning parameter",
    async (context) => {
      if (skip !== undefined) context.skip();
      const cwd = join(home.dir, "effort");
      mkdirSync(cwd, { recursive: true });
      const args = execArgs(served.baseURL, catalog, "Which model? [[emu:echo-model]]", REASONING_MODEL);
      const result = await run(home, ["-c", "model_reasoning_effort=high", ...args], cwd);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      const messages = events(result.stdout).filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain(
        "Model: gpt-5.5; params: fast=false,reasoning=high; max_mode: false; model_details: none; " +
          "allowed tools: mcp_tool_call",
      );
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "-c model_reasoning_effort=max reaches Cursor as the top tier of a model that has one",
    async (context) => {
      if (skip !== undefined) context.skip();
      const cwd = join(home.dir, "effort-max");
      mkdirSync(cwd, { recursive: true });
      const args = execArgs(served.baseURL, catalog, "Which model? [[emu:echo-model]]", MAX_MODEL);
      const result = await run(home, ["-c", "model_reasoning_effort=max", ...args], cwd);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      const messages = events(result.stdout).filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain(
        "Model: claude-opus-4-8; params: context=300k,effort=max,thinking=true; max_mode: false; model_details: none",
      );
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "-c model_reasoning_effort=high on a flat id runs its listed tier id",
    async (context) => {
      if (skip !== undefined) context.skip();
      const cwd = join(home.dir, "effort-flat");
      mkdirSync(cwd, { recursive: true });
      const args = execArgs(served.baseURL, catalog, "Which model? [[emu:echo-model]]", FLAT_MODEL);
      const result = await run(home, ["-c", "model_reasoning_effort=high", ...args], cwd);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      const messages = events(result.stdout).filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain(
        "Model: gpt-5.3-codex-high; params: none; max_mode: false; model_details: none",
      );
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "applies a patch through the free-form apply_patch tool",
    async (context) => {
      if (skip !== undefined) context.skip();
      const nonce = `patched-${randomBytes(6).toString("hex")}`;
      const cwd = join(home.dir, "patch");
      mkdirSync(cwd, { recursive: true });
      served.emulator.resetStats();
      const patch = `*** Begin Patch\n*** Add File: hello.txt\n+${nonce}\n*** End Patch\n`;
      const prompt = `Add the file [[emu:tool apply_patch ${JSON.stringify({ input: patch })}]]`;
      const result = await run(home, execArgs(served.baseURL, catalog, prompt), cwd);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      expect(existsSync(join(cwd, "hello.txt")), diagnostics).toBe(true);
      expect(readFileSync(join(cwd, "hello.txt"), "utf8")).toBe(`${nonce}\n`);
      const messages = events(result.stdout).filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain("apply_patch returned:");
      expect(served.emulator.stats().turns).toHaveLength(1);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    'searches the web with web_search = "live": a web_search_call and an answer citing a result (#27)',
    async (context) => {
      if (skip !== undefined) context.skip();
      const cwd = join(home.dir, "search");
      mkdirSync(cwd, { recursive: true });
      served.emulator.resetStats();
      const args = execArgs(served.baseURL, catalog, "Look it up [[emu:web-search codex cursor bridge]]");
      const result = await run(home, ["-c", 'web_search="live"', ...args], cwd);
      const diagnostics = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      const all = events(result.stdout);
      expect(
        all.some((e) => e.type === "item.completed" && e.item?.type === "web_search"),
        diagnostics,
      ).toBe(true);
      const messages = all.filter((e) => e.item?.type === "agent_message").map((e) => e.item?.text ?? "");
      expect(messages.at(-1), diagnostics).toContain("https://emulator.invalid/search/codex-cursor-bridge/1");
      expect(served.emulator.stats().webSearches).toBe(1);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
