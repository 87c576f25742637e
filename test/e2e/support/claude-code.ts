/**
 * Claude Code 2.1.330 as the journey tests drive it: `claude -p … --output-format stream-json --verbose` in a given
 * HOME and project folder against a bridge, its stream-json lines parsed, a hard kill after a timeout.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type StartedClient, startClient } from "./client-process.js";
import type { TempHome } from "./served-bridge.js";
import { clientBin } from "./test-clients.js";

/** How long one `claude -p` may take on a loaded machine before it is killed. */
export const CLAUDE_TIMEOUT_MS = 150_000;

/** One Claude Code run: exit code, its stream-json lines, stderr. */
export interface ClaudeRun {
  code: number | null;
  lines: Array<Record<string, unknown>>;
  stdout: string;
  stderr: string;
}

/** What a run needs besides the prompt's arguments. */
export interface ClaudeOptions {
  home: TempHome;
  cwd: string;
  /** The bridge's base URL without `/v1`. */
  baseURL: string;
  model: string;
  /** The model Claude Code's background requests (titles, summaries) use. */
  backgroundModel: string;
  allowedTools?: string;
  maxTurns?: number;
  env?: Record<string, string>;
}

function claudeArgs(args: readonly string[], options: ClaudeOptions): string[] {
  return [
    ...args,
    "--allowedTools",
    options.allowedTools ?? "Bash",
    "--output-format",
    "stream-json",
    "--verbose",
    "--max-turns",
    String(options.maxTurns ?? 8),
    "--model",
    options.model,
  ];
}

function claudeEnv(options: ClaudeOptions): NodeJS.ProcessEnv {
  const tmp = join(options.home.dir, "tmp");
  mkdirSync(tmp, { recursive: true });
  return {
    ...options.home.env,
    TMPDIR: tmp,
    ANTHROPIC_BASE_URL: options.baseURL,
    ANTHROPIC_API_KEY: "e2e",
    ANTHROPIC_DEFAULT_HAIKU_MODEL: options.backgroundModel,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
    DISABLE_AUTOUPDATER: "1",
    // Without this Claude Code defers WebSearch/WebFetch behind its ToolSearch tool; declare every tool up front.
    ENABLE_TOOL_SEARCH: "false",
    ...options.env,
  };
}

/** The stream-json lines of `stdout` (an unfinished last line is left out). */
export function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split("\n")
    .filter((line) => line.trim().startsWith("{"))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** Starts `claude` (to interrupt it); {@link runClaude} runs it to its end. */
export function startClaude(args: readonly string[], options: ClaudeOptions): StartedClient {
  return startClient(clientBin("claude"), claudeArgs(args, options), {
    cwd: options.cwd,
    env: claudeEnv(options),
    timeoutMs: CLAUDE_TIMEOUT_MS,
  });
}

export async function runClaude(args: readonly string[], options: ClaudeOptions): Promise<ClaudeRun> {
  const run = await startClaude(args, options).done;
  return { code: run.code, lines: jsonLines(run.stdout), stdout: run.stdout, stderr: run.stderr };
}

/** The closing `result` line, or an error with everything the run printed. */
export function finalResult(run: ClaudeRun): Record<string, unknown> {
  const result = run.lines.at(-1);
  if (result?.type !== "result") {
    throw new Error(`Claude Code ended without a result (exit ${run.code}):\n${run.stderr}\n${run.stdout}`);
  }
  return result;
}

/** The `tool_result` blocks Claude Code sent back, in order. */
export function toolResults(run: ClaudeRun): Array<{ content: string; isError: boolean }> {
  const out: Array<{ content: string; isError: boolean }> = [];
  for (const line of run.lines) {
    if (line.type !== "user") continue;
    const content = (line.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Array<Record<string, unknown>>) {
      if (block.type !== "tool_result") continue;
      const text = typeof block.content === "string" ? block.content : JSON.stringify(block.content);
      out.push({ content: text, isError: block.is_error === true });
    }
  }
  return out;
}
