/**
 * Codex CLI 0.169.0 as the journey tests drive it: `codex exec --json` against a bridge's `/v1/responses`, in its own
 * CODEX_HOME, with a model catalog that gives the emulator's models the free-form `apply_patch` tool.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clientDiagnostics, jsonLines, runClient } from "./client-process.js";
import type { TempHome } from "./served-bridge.js";
import { clientBin } from "./test-clients.js";

/** How long one `codex exec` may take on a loaded machine before it is killed. */
export const CODEX_TIMEOUT_MS = 150_000;

export interface CodexRun {
  code: number;
  stdout: string;
  stderr: string;
  events: CodexEvent[];
  /** Exit code, stdout and the end of stderr, for an assertion's message. */
  diagnostics: string;
}

/** One `--json` line. */
export interface CodexEvent {
  type: string;
  thread_id?: string;
  item?: {
    type?: string;
    text?: string;
    command?: string;
    aggregated_output?: string;
    exit_code?: number | null;
    status?: string;
    changes?: Array<{ path?: string; kind?: string }>;
  };
}

/** Runs `codex` with `args` in `cwd` (CODEX_HOME and TMPDIR inside `home`). */
export async function runCodex(home: TempHome, args: readonly string[], cwd: string): Promise<CodexRun> {
  const env = { ...home.env, CODEX_HOME: join(home.dir, "codex-home"), TMPDIR: join(home.dir, "tmp"), MOCK_KEY: "e2e" };
  mkdirSync(env.CODEX_HOME, { recursive: true });
  mkdirSync(env.TMPDIR, { recursive: true });
  const result = await runClient(clientBin("codex"), args, { cwd, env, timeoutMs: CODEX_TIMEOUT_MS });
  const code = result.code ?? 1;
  const events = jsonLines<CodexEvent>(result.stdout);
  const diagnostics = clientDiagnostics({ ...result, code });
  return { code, stdout: result.stdout, stderr: result.stderr, events, diagnostics };
}

/** The options every `codex exec` of the tests takes (before `resume`, or before the prompt). */
export function execOptions(baseURL: string, catalog: string, model: string, ephemeral = true): string[] {
  const provider = `{name="bridge",base_url="${baseURL}",env_key="MOCK_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`;
  return [
    "--skip-git-repo-check",
    ...(ephemeral ? ["--ephemeral"] : []),
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
  ];
}

/** Codex's bundled catalog entry of a free-form-`apply_patch` model, once per slug of `models`. */
export async function writeCatalog(home: TempHome, models: readonly string[]): Promise<string> {
  const listed = await runCodex(home, ["debug", "models"], home.dir);
  type Entry = { slug: string; apply_patch_tool_type?: string; tool_mode?: string | null };
  const catalog = JSON.parse(listed.stdout) as { models: Entry[] };
  const freeform = catalog.models.filter((model) => model.apply_patch_tool_type === "freeform");
  const entry = freeform.find((model) => model.tool_mode == null) ?? freeform[0];
  if (entry === undefined) throw new Error(`no freeform apply_patch model in Codex's catalog: ${listed.stderr}`);
  const file = join(home.dir, "catalog.json");
  // tool_mode null: the plain tool set (a `code_mode_only` entry would hide exec_command behind code mode).
  const entries = models.map((slug) => ({ ...entry, slug, display_name: slug, tool_mode: null }));
  writeFileSync(file, JSON.stringify({ models: entries }));
  return file;
}

/** The texts of the run's `agent_message` items, in order. */
export function agentMessages(run: CodexRun): string[] {
  return run.events
    .filter((e) => e.type === "item.completed" && e.item?.type === "agent_message")
    .map((e) => e.item?.text ?? "");
}

/** The run's completed `command_execution` items. */
export function commands(run: CodexRun): NonNullable<CodexEvent["item"]>[] {
  return run.events.flatMap((e) =>
    e.type === "item.completed" && e.item?.type === "command_execution" ? [e.item] : [],
  );
}
