/**
 * OpenCode 1.18.33 (its pinned binary in test/clients) as the end-to-end tests drive it: `opencode run --format json`
 * with its events parsed, and the configuration of its two ways to Cursor: a provider block for `cursor-bridge serve`
 * (offline: no npm registry), or the cursor-bridge plugin (plugin-env.ts).
 */
import { expect } from "vitest";
import {
  type ClientRun,
  clientDiagnostics,
  closedPort,
  jsonLines,
  type StartedClient,
  startClient,
} from "./client-process.js";
import type { TempHome } from "./served-bridge.js";
import { OPENCODE_BINARY, OPENCODE_OFFLINE_ENV } from "./test-clients.js";

/** How long one `opencode run` may take on a loaded machine before it is killed. */
export const OPENCODE_TIMEOUT_MS = 150_000;

/** The tools the journeys let OpenCode run without asking. */
export const OPENCODE_PERMISSION = { bash: "allow", read: "allow", edit: "deny", webfetch: "deny" } as const;

/** One `--format json` event line. */
export interface OpenCodeEvent {
  type: string;
  sessionID?: string;
  error?: { name?: string; data?: { message?: string } };
  part?: {
    type?: string;
    text?: string;
    tool?: string;
    reason?: string;
    state?: { status?: string; output?: string; error?: string; input?: Record<string, unknown> };
  };
}

/** One `opencode run` to its end: exit code (1 for none), its events, and everything for an assertion's message. */
export interface OpenCodeRun extends ClientRun {
  code: number;
  events: OpenCodeEvent[];
  diagnostics: string;
}

/** `run -m MODEL --format json WORDS…`; `model` names its provider (`bridge/composer-1`). */
export function openCodeRunArgs(model: string, words: readonly string[]): string[] {
  return ["run", "-m", model, "--format", "json", ...words];
}

export interface OpenCodeOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number;
  stdin?: string;
}

/** Starts OpenCode with `args` (to stop it); {@link runOpenCode} runs it to its end. */
export function startOpenCode(args: readonly string[], options: OpenCodeOptions): StartedClient {
  return startClient(OPENCODE_BINARY, args, { timeoutMs: OPENCODE_TIMEOUT_MS, ...options });
}

export async function runOpenCode(args: readonly string[], options: OpenCodeOptions): Promise<OpenCodeRun> {
  const result = await startOpenCode(args, options).done;
  const code = result.code ?? 1;
  return {
    ...result,
    code,
    events: openCodeEvents(result.stdout),
    diagnostics: clientDiagnostics({ ...result, code }),
  };
}

/** The `--format json` events of `stdout`. */
export function openCodeEvents(stdout: string): OpenCodeEvent[] {
  return jsonLines<OpenCodeEvent>(stdout);
}

/** The texts of the run's `text` events, one a line. */
export function openCodeText(run: { events: OpenCodeEvent[] }): string {
  return run.events
    .filter((e) => e.type === "text")
    .map((e) => e.part?.text ?? "")
    .join("\n");
}

/** Checks what the user sees of a run that answered: exit 0, a text matching `answer`, no error event. */
export function expectAnswered(run: OpenCodeRun, answer: RegExp): void {
  expect(run.code, run.diagnostics).toBe(0);
  expect(openCodeText(run), run.diagnostics).toMatch(answer);
  expect(
    run.events.some((e) => e.type === "error"),
    run.diagnostics,
  ).toBe(false);
}

/** The run's `tool_use` events, as OpenCode reports each call when it completes. */
export function toolUses(run: { events: OpenCodeEvent[] }): OpenCodeEvent[] {
  return run.events.filter((e) => e.type === "tool_use");
}

/**
 * OpenCode's settings besides its providers: `main` and `small` (titles) as `provider/model`, no autoupdate, no
 * sharing, and `extra` (a permission, a plugin).
 */
export function openCodeSettings(main: string, small: string, extra: Record<string, unknown> = {}) {
  return { model: main, small_model: small, autoupdate: false, share: "disabled", ...extra };
}

/**
 * OpenCode's environment with the provider block `bridge` for `cursor-bridge serve` at `baseURL` (each of `models`
 * with `tool_call: true` and its own settings; `main` and `small` are model ids of that block; `extra` settings): the
 * temporary HOME, that config, OpenCode offline, and an npm registry on a closed port (nothing is installed for a
 * provider block; a refused connection fails any attempt at once).
 */
export async function providerBlockEnv(
  home: TempHome,
  baseURL: string,
  models: Record<string, Record<string, unknown>>,
  choice: { main: string; small: string },
  extra: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const entries = Object.entries(models).map(([id, settings]) => [id, { name: id, tool_call: true, ...settings }]);
  const bridge = {
    npm: "@ai-sdk/openai-compatible",
    name: "cursor-bridge",
    options: { baseURL, apiKey: "e2e" },
    models: Object.fromEntries(entries),
  };
  const config = {
    provider: { bridge },
    ...openCodeSettings(`bridge/${choice.main}`, `bridge/${choice.small}`, extra),
  };
  return {
    ...home.env,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    ...OPENCODE_OFFLINE_ENV,
    npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
  };
}
