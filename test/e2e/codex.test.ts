import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CODEX_TIMEOUT_MS, execOptions, runCodex, writeCatalog } from "./support/codex.js";
import { useServedBridge } from "./support/served-bridge.js";
import { ensureTestClients } from "./support/test-clients.js";

const MODEL = "composer-1";
/** A parameterised model of the emulator's catalogue (reasoning none…extra-high, fast). */
const REASONING_MODEL = "gpt-5.5";
/** A model of the emulator's catalogue whose effort tops at `max`. */
const MAX_MODEL = "claude-opus-4-8";
/** A flat id (no parameters) listed beside its tier ids (`gpt-5.3-codex-high`…). */
const FLAT_MODEL = "gpt-5.3-codex";
const TEST_TIMEOUT_MS = CODEX_TIMEOUT_MS + 30_000;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the Codex end-to-end tests: ${reason}`);

describe.skipIf(reason !== undefined)("Codex CLI → cursor-bridge serve (/v1/responses) → emulator", () => {
  const bridge = useServedBridge("codex");
  let catalog: string;

  beforeAll(async () => {
    catalog = await writeCatalog(bridge.home, [MODEL, REASONING_MODEL, MAX_MODEL, FLAT_MODEL]);
  }, CODEX_TIMEOUT_MS);

  /** `codex exec` with the test's options and `prompt` (`before` goes ahead of `exec`: `-c` settings). */
  const exec = (cwd: string, prompt: string, model = MODEL, before: string[] = []) =>
    runCodex(bridge.home, [...before, "exec", ...execOptions(bridge.baseURL, catalog, model), prompt], cwd);

  it(
    "runs exec_command for real on one Cursor Run and answers with its output",
    async () => {
      const nonce = `nonce-${randomBytes(6).toString("hex")}`;
      const cwd = bridge.home.folder("echo");
      bridge.emulator.resetStats();
      const prompt = `Print the nonce [[emu:tool exec_command {"cmd":"echo ${nonce}"}]]`;
      const result = await exec(cwd, prompt);
      const { diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);
      const all = result.events;
      const command = all.find((e) => e.item?.type === "command_execution" && e.type === "item.completed");
      expect(command?.item?.exit_code, diagnostics).toBe(0);
      expect(command?.item?.aggregated_output).toContain(nonce);
      const messages = all.filter((e) => e.item?.type === "agent_message").map((e) => e.item?.text ?? "");
      expect(messages.at(-1), diagnostics).toContain("exec_command returned:");
      expect(messages.at(-1)).toContain(nonce);
      expect(all.some((e) => e.type === "turn.completed")).toBe(true);
      const turns = bridge.emulator.stats().turns;
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "-c model_reasoning_effort=high reaches Cursor as the model's reasoning parameter",
    async () => {
      const cwd = bridge.home.folder("effort");
      const before = ["-c", "model_reasoning_effort=high"];
      const result = await exec(cwd, "Which model? [[emu:echo-model]]", REASONING_MODEL, before);
      const { diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);
      const messages = result.events.filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain(
        "Model: gpt-5.5; params: fast=false,reasoning=high; max_mode: false; model_details: none; " +
          "allowed tools: mcp_tool_call",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "-c model_reasoning_effort=max reaches Cursor as the top tier of a model that has one",
    async () => {
      const cwd = bridge.home.folder("effort-max");
      const before = ["-c", "model_reasoning_effort=max"];
      const result = await exec(cwd, "Which model? [[emu:echo-model]]", MAX_MODEL, before);
      const { diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);
      const messages = result.events.filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain(
        "Model: claude-opus-4-8; params: context=300k,effort=max,thinking=true; max_mode: false; model_details: none",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "-c model_reasoning_effort=high on a flat id runs its listed tier id",
    async () => {
      const cwd = bridge.home.folder("effort-flat");
      const before = ["-c", "model_reasoning_effort=high"];
      const result = await exec(cwd, "Which model? [[emu:echo-model]]", FLAT_MODEL, before);
      const { diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);
      const messages = result.events.filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain(
        "Model: gpt-5.3-codex-high; params: none; max_mode: false; model_details: none",
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "applies a patch through the free-form apply_patch tool",
    async () => {
      const nonce = `patched-${randomBytes(6).toString("hex")}`;
      const cwd = bridge.home.folder("patch");
      bridge.emulator.resetStats();
      const patch = `*** Begin Patch\n*** Add File: hello.txt\n+${nonce}\n*** End Patch\n`;
      const prompt = `Add the file [[emu:tool apply_patch ${JSON.stringify({ input: patch })}]]`;
      const result = await exec(cwd, prompt);
      const { diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);
      expect(existsSync(join(cwd, "hello.txt")), diagnostics).toBe(true);
      expect(readFileSync(join(cwd, "hello.txt"), "utf8")).toBe(`${nonce}\n`);
      const messages = result.events.filter((e) => e.item?.type === "agent_message");
      expect(messages.at(-1)?.item?.text, diagnostics).toContain("apply_patch returned:");
      expect(bridge.emulator.stats().turns).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'searches the web with web_search = "live": a web_search_call and an answer citing a result (#27)',
    async () => {
      const cwd = bridge.home.folder("search");
      bridge.emulator.resetStats();
      const result = await exec(cwd, "Look it up [[emu:web-search codex cursor bridge]]", MODEL, [
        "-c",
        'web_search="live"',
      ]);
      const { diagnostics } = result;
      expect(result.code, diagnostics).toBe(0);
      const all = result.events;
      expect(
        all.some((e) => e.type === "item.completed" && e.item?.type === "web_search"),
        diagnostics,
      ).toBe(true);
      const messages = all.filter((e) => e.item?.type === "agent_message").map((e) => e.item?.text ?? "");
      expect(messages.at(-1), diagnostics).toContain("https://emulator.invalid/search/codex-cursor-bridge/1");
      expect(bridge.emulator.stats().webSearches).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );
});
