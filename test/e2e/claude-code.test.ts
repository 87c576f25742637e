/**
 * Claude Code 2.1.330 (pinned in the test-only package test/clients, real-clients.md) against `cursor-bridge serve`,
 * fully offline in its own temporary HOME: the emulated model asks for `Bash` with `echo <nonce>`, Claude Code runs
 * it for real, the result resumes the parked Cursor turn (one Run), and the final result carries the nonce. A second
 * invocation with `--continue` continues the same Cursor conversation and `[[emu:recall]]` answers the first message.
 * Claude Code's background model (titles, summaries) is a different model, so the emulator's per-Run statistics
 * tell the main turns apart by model.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseCatalogueFile } from "../../src/emulator/catalogue.js";
import { type ClaudeOptions, finalResult, runClaude as runClaudeWith } from "./support/claude-code.js";
import { startServedBridge, useServedBridge } from "./support/served-bridge.js";
import { ensureTestClients } from "./support/test-clients.js";

const MAIN_MODEL = "claude-4.5-sonnet";
const BACKGROUND_MODEL = "composer-1";

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the Claude Code end-to-end test: ${reason}`);

describe.skipIf(reason !== undefined)("Claude Code → cursor-bridge serve → emulator", () => {
  const bridge = useServedBridge("claude");

  /** `claude ARGS` in the HOME's project folder against `baseURL` (the served bridge's unless told). */
  function runClaude(args: string[], extra: Partial<ClaudeOptions> = {}) {
    return runClaudeWith(args, {
      home: bridge.home,
      cwd: bridge.home.folder("project"),
      baseURL: bridge.baseURL.replace(/\/v1$/, ""),
      model: MAIN_MODEL,
      backgroundModel: BACKGROUND_MODEL,
      maxTurns: 4,
      ...extra,
    });
  }
  const mainTurns = () => bridge.emulator.stats().turns.filter((turn) => turn.model === MAIN_MODEL);

  it("with thinking enabled (a 20000-token budget) reaches Cursor as thinking=true and effort high", async () => {
    const run = await runClaude(["-p", "Which model? [[emu:echo-model]]"], {
      // claude-sonnet-5's default effort is medium: high can only come from the budget.
      model: "claude-sonnet-5",
      env: { MAX_THINKING_TOKENS: "20000" },
    });
    const result = finalResult(run);
    expect(String(result.result)).toContain(
      "Model: claude-sonnet-5; params: context=300k,effort=high,thinking=true; max_mode: false; " +
        "model_details: none; allowed tools: mcp_tool_call",
    );
  });

  it("a model picked with [1m] (the context-1m beta) reaches Cursor as the 1m context in Max mode", async () => {
    // Claude Code sends `claude-sonnet-4-6[1m]` as `claude-sonnet-4-6` plus `anthropic-beta: context-1m-…`; a Cursor
    // Sonnet 4.6 with a 1m context tier (the built-in catalogue has none) shows where that choice lands.
    const sonnet = {
      id: "claude-sonnet-4-6",
      parameters: [
        { id: "thinking", values: ["false", "true"] },
        { id: "context", values: ["200k", "1m"] },
        { id: "effort", values: ["low", "medium", "high"] },
      ],
      defaults: { thinking: "true", context: "200k", effort: "medium" },
    };
    const long = await startServedBridge({
      extraBaseModels: parseCatalogueFile(JSON.stringify({ models: [sonnet] })).bases,
    });
    try {
      const run = await runClaude(["-p", "Which model? [[emu:echo-model]]"], {
        baseURL: long.baseURL.replace(/\/v1$/, ""),
        model: "claude-sonnet-4-6[1m]",
      });
      const result = String(finalResult(run).result);
      // Sonnet 4.6 itself (not the newest Sonnet), at 1m in Max mode.
      expect(result).toContain(
        "Model: claude-sonnet-4-6; params: context=1m,effort=high,thinking=true; max_mode: true;",
      );
    } finally {
      await long.close();
    }
  });

  it("--model claude-sonnet-4-5 reaches Cursor as its Sonnet 4.5, not the newest Sonnet", async () => {
    const run = await runClaude(["-p", "Which model? [[emu:echo-model]]"], {
      model: "claude-sonnet-4-5",
    });
    // Claude Code asks for thinking on this model, so its thinking model runs.
    expect(String(finalResult(run).result)).toContain("Model: claude-4.5-sonnet-thinking; params: none;");
  });

  it("runs `echo <nonce>` through Bash on one Run, then continues the session with --continue", async () => {
    const nonce = `nonce-${randomBytes(6).toString("hex")}`;
    const prompt = `Please echo ${nonce}. [[emu:tool Bash {"command":"echo ${nonce}","description":"Print the nonce"}]]`;
    const first = await runClaude(["-p", prompt]);
    const result = finalResult(first);
    expect(result.subtype).toBe("success");
    expect(String(result.result)).toContain(`Bash returned: ${nonce}`);
    const toolUse = first.lines.find(
      (line) =>
        line.type === "user" && JSON.stringify(line).includes("tool_result") && JSON.stringify(line).includes(nonce),
    );
    expect(toolUse, "Claude Code really ran the command and reported its output").toBeDefined();
    const afterFirst = mainTurns();
    expect(afterFirst).toHaveLength(1);
    expect(afterFirst[0]?.outcome).toBe("completed");

    const second = await runClaude(["--continue", "-p", "[[emu:recall]]"]);
    const recall = finalResult(second);
    expect(recall.subtype).toBe("success");
    expect(String(recall.result)).toContain("First message:");
    expect(String(recall.result)).toContain(`Please echo ${nonce}.`);
    const turns = mainTurns();
    expect(turns).toHaveLength(2);
    // Continued: the same Cursor conversation, carried by its checkpoint rather than a replay of the history.
    expect(turns[1]?.conversationId).toBe(turns[0]?.conversationId);
  });

  it("searches the web with its WebSearch tool through Cursor: the answer cites an emulator result (#27)", async () => {
    const before = bridge.emulator.stats().webSearches;
    // The model calls WebSearch with a query that is itself a directive; Claude Code's search request (a
    // web_search_20250305 server tool) carries it to the emulator, which runs the search offline.
    const prompt = 'Search the web. [[emu:tool WebSearch {"query":"[[emu:web-search cursor bridge news]]"}]]';
    const run = await runClaude(["-p", prompt], { allowedTools: "WebSearch" });
    const result = finalResult(run);
    expect(result.subtype).toBe("success");
    expect(String(result.result)).toContain("https://emulator.invalid/search/cursor-bridge-news/");
    expect(bridge.emulator.stats().webSearches).toBe(before + 1);
  });
});
