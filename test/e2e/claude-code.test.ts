/**
 * Claude Code 2.1.330 (pinned in the test-only package test/clients, real-clients.md) against `cursor-bridge serve`,
 * fully offline in its own temporary HOME: the emulated model asks for `Bash` with `echo <nonce>`, Claude Code runs
 * it for real, the result resumes the parked Cursor turn (one Run), and the final result carries the nonce. A second
 * invocation with `--continue` continues the same Cursor conversation and `[[emu:recall]]` answers the first message.
 * Claude Code's background model (titles, summaries) is a different model, so the emulator's per-Run statistics
 * tell the main turns apart by model.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCatalogueFile } from "../../src/emulator/catalogue.js";
import { createTempHome, type ServedBridge, startServedBridge, type TempHome } from "./support/served-bridge.js";
import { clientBin, ensureTestClients } from "./support/test-clients.js";

const MAIN_MODEL = "claude-4.5-sonnet";
const BACKGROUND_MODEL = "composer-1";
const RUN_TIMEOUT_MS = 120_000;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the Claude Code end-to-end test: ${reason}`);

interface ClaudeRun {
  code: number | null;
  lines: Array<Record<string, unknown>>;
  stderr: string;
}

function runClaude(
  home: TempHome,
  cwd: string,
  baseURL: string,
  args: string[],
  allowedTools = "Bash",
  extra: { model?: string; env?: Record<string, string> } = {},
): Promise<ClaudeRun> {
  const tmp = join(home.dir, "tmp");
  mkdirSync(tmp, { recursive: true });
  const env = {
    ...home.env,
    TMPDIR: tmp,
    ANTHROPIC_BASE_URL: baseURL,
    ANTHROPIC_API_KEY: "e2e",
    ANTHROPIC_DEFAULT_HAIKU_MODEL: BACKGROUND_MODEL,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
    DISABLE_AUTOUPDATER: "1",
    // Without this Claude Code defers WebSearch/WebFetch behind its ToolSearch tool; declare every tool up front.
    ENABLE_TOOL_SEARCH: "false",
    ...extra.env,
  };
  const fixed = ["--allowedTools", allowedTools, "--output-format", "stream-json", "--verbose", "--max-turns", "4"];
  return new Promise((resolve, reject) => {
    const child = spawn(clientBin("claude"), [...args, ...fixed, "--model", extra.model ?? MAIN_MODEL], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (part: string) => (stdout += part));
    child.stderr?.setEncoding("utf8").on("data", (part: string) => (stderr += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      const lines = stdout
        .split("\n")
        .filter((line) => line.trim().startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, lines, stderr });
    });
  });
}

function finalResult(run: ClaudeRun): Record<string, unknown> {
  const result = run.lines.at(-1);
  if (result?.type !== "result") {
    throw new Error(
      `Claude Code ended without a result (exit ${run.code}):\n${run.stderr}\n${JSON.stringify(run.lines)}`,
    );
  }
  return result;
}

describe.skipIf(reason !== undefined)("Claude Code → cursor-bridge serve → emulator", () => {
  let served: ServedBridge;
  let home: TempHome;
  let project: string;
  let baseURL: string;

  beforeAll(async () => {
    served = await startServedBridge();
    baseURL = served.baseURL.replace(/\/v1$/, "");
    home = createTempHome("claude");
    project = join(home.dir, "project");
    mkdirSync(project);
  });
  afterAll(async () => {
    await served?.close();
    home?.remove();
  });

  const mainTurns = () => served.emulator.stats().turns.filter((turn) => turn.model === MAIN_MODEL);

  it("with thinking enabled (a 20000-token budget) reaches Cursor as thinking=true and effort high", async () => {
    const run = await runClaude(home, project, baseURL, ["-p", "Which model? [[emu:echo-model]]"], "Bash", {
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
      const run = await runClaude(
        home,
        project,
        long.baseURL.replace(/\/v1$/, ""),
        ["-p", "Which model? [[emu:echo-model]]"],
        "Bash",
        { model: "claude-sonnet-4-6[1m]" },
      );
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
    const run = await runClaude(home, project, baseURL, ["-p", "Which model? [[emu:echo-model]]"], "Bash", {
      model: "claude-sonnet-4-5",
    });
    // Claude Code asks for thinking on this model, so its thinking model runs.
    expect(String(finalResult(run).result)).toContain("Model: claude-4.5-sonnet-thinking; params: none;");
  });

  it("runs `echo <nonce>` through Bash on one Run, then continues the session with --continue", async () => {
    const nonce = `nonce-${randomBytes(6).toString("hex")}`;
    const prompt = `Please echo ${nonce}. [[emu:tool Bash {"command":"echo ${nonce}","description":"Print the nonce"}]]`;
    const first = await runClaude(home, project, baseURL, ["-p", prompt]);
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

    const second = await runClaude(home, project, baseURL, ["--continue", "-p", "[[emu:recall]]"]);
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
    const before = served.emulator.stats().webSearches;
    // The model calls WebSearch with a query that is itself a directive; Claude Code's search request (a
    // web_search_20250305 server tool) carries it to the emulator, which runs the search offline.
    const prompt = 'Search the web. [[emu:tool WebSearch {"query":"[[emu:web-search cursor bridge news]]"}]]';
    const run = await runClaude(home, project, baseURL, ["-p", prompt], "WebSearch");
    const result = finalResult(run);
    expect(result.subtype).toBe("success");
    expect(String(result.result)).toContain("https://emulator.invalid/search/cursor-bridge-news/");
    expect(served.emulator.stats().webSearches).toBe(before + 1);
  });
});
