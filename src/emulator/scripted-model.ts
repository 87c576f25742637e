/**
 * The scripted model: a pure function from what the server knows about a turn (the new user message, the history
 * it rebuilt from the conversation state, the declared client tools) to a deterministic plan, plus the reply that
 * follows once tool results are in. No I/O and no clock: turn.ts streams the plan.
 */
import {
  type Directive,
  type JsonObject,
  type NativeKind,
  parseDirectives,
  type ScriptedErrorCode,
  type ScriptedTask,
  type ScriptedTodo,
} from "./directives.js";
import { describeImages, type ReceivedImage } from "./images.js";

/** One entry of the conversation as the server rebuilt it from the received state (state.ts). */
export type HistoryEntry =
  | { role: "system" | "user" | "assistant"; text: string }
  | { role: "tool-result"; name: string; text: string };

/** What the model sees of a turn. */
export interface ModelInput {
  /** The text that carries the directives: the new user message, or on resume the last user message in the state. */
  userText: string;
  /** True for a `resume_action` turn: the client rebuilt the conversation after running tools. */
  resume: boolean;
  /** Earlier conversation, oldest first (does not include the new user message). */
  history: readonly HistoryEntry[];
  /** Names of the declared client tools. */
  declaredTools: readonly string[];
  /** Images the turn received (earlier turns first, then the new message's), described from their bytes. */
  images?: readonly ReceivedImage[];
  /** What the run_request selected and which tools its headers allow (`[[emu:echo-model]]`, native refusals). */
  request?: RequestFacts;
}

/** The model fields of a run_request and its `x-cursor-agent-allowed-tools` header. */
export interface RequestFacts {
  /** `requested_model.model_id` ("" when there is none). */
  modelId: string;
  params: ReadonlyArray<{ id: string; value: string }>;
  maxMode: boolean;
  /** `model_details.model_id`, when model_details was sent. */
  modelDetails: string | undefined;
  /** The header's value; null when absent (every tool allowed). */
  allowedTools: string | null;
  /** The `x-cursor-agent-exclude-tools` header; null when absent. */
  excludedTools?: string | null;
}

/** The ToolCall case (cursor-protocol-addendum-3.md X1) each native kind shows up as. */
const NATIVE_TOOL_CALL: Record<NativeKind, string> = {
  shell: "shell_tool_call",
  read: "read_tool_call",
  ls: "ls_tool_call",
  grep: "grep_tool_call",
  write: "edit_tool_call",
  fetch: "fetch_tool_call",
};

/** The groups the tool headers may name, by the ToolCall cases each stands for (cursor-protocol-addendum-3.md X1). */
const TOOL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  shell: ["shell_tool_call", "write_shell_stdin_tool_call"],
  mcp: [
    "mcp_tool_call",
    "get_mcp_tools_tool_call",
    "list_mcp_resources_tool_call",
    "read_mcp_resource_tool_call",
    "mcp_auth_tool_call",
  ],
};

/** Whether a tool header's comma-separated list names a ToolCall case, itself or through its group. */
function listed(header: string, toolCall: string): boolean {
  return header
    .split(",")
    .map((name) => name.trim())
    .some((name) => name === toolCall || TOOL_GROUPS[name]?.includes(toolCall) === true);
}

/**
 * Whether the Run's tool headers let the model use a ToolCall case (X1): `x-cursor-agent-allowed-tools` absent allows
 * every tool, present (empty included) only those it lists; `x-cursor-agent-exclude-tools` takes away those it lists.
 */
export function toolAllowed(
  allowedTools: string | null | undefined,
  toolCall: string,
  excludedTools?: string | null,
): boolean {
  if (excludedTools !== null && excludedTools !== undefined && listed(excludedTools, toolCall)) return false;
  return allowedTools === null || allowedTools === undefined || listed(allowedTools, toolCall);
}

/** The one line `[[emu:echo-model]]` replies with. */
export function echoModelLine(facts: RequestFacts | undefined): string {
  const params = [...(facts?.params ?? [])]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => `${p.id}=${p.value}`)
    .join(",");
  return [
    `Model: ${facts?.modelId || "none"}`,
    `params: ${params || "none"}`,
    `max_mode: ${facts?.maxMode === true}`,
    `model_details: ${facts?.modelDetails || "none"}`,
    `allowed tools: ${facts?.allowedTools ?? "none"}`,
  ].join("; ");
}

/**
 * A tool call the model makes. Every call of a step is issued before any result is awaited; a step (from 0, counted
 * by `[[emu:then]]`) starts once every result of the step before it arrived.
 */
export type PlannedCall =
  | { kind: "mcp"; name: string; args: JsonObject; step: number }
  | { kind: "native"; native: NativeKind; args: JsonObject; step: number };

/** A scripted failure. */
export type PlannedFault =
  | { kind: "error"; code: ScriptedErrorCode }
  | { kind: "stall"; afterTokens: number }
  | { kind: "drop"; afterTokens: number }
  | { kind: "overflow"; once?: true }
  | { kind: "truncate" };

/** The deterministic plan of one turn. */
export interface TurnPlan {
  thinkingTokens: number;
  calls: PlannedCall[];
  /** Reply parts known before any tool runs (echo, recall, tokens, unavailable tools, directive problems). */
  textParts: string[];
  /** Token rate from `[[emu:rate]]`; undefined = the emulator default. */
  tokensPerSecond?: number;
  fault?: PlannedFault;
  /** `[[emu:slow-cancel MS]]`: after the client's cancel_action the turn ends this many ms later. */
  cancelDelayMs?: number;
  /** `[[emu:abort-exec MS]]`: the server aborts tool calls still unanswered after this many ms. */
  abortExecAfterMs?: number;
  /** `[[emu:tool-chunks N]]`: a client tool's argument snapshots grow by at most N characters (default 16). */
  toolChunkSize?: number;
  /** `[[emu:tool-gap MS]]`: the server waits this long before each of the step's calls after the first. */
  toolGapMs?: number;
  /** `[[emu:tool-cut N]]`: the step's Nth client tool call (from 1) stops forming halfway and is never completed. */
  toolCut?: number;
  /** `[[emu:tool-count N]]`: the `call_count` every step's `tool_requests_listed` says, whatever the step's calls. */
  toolCount?: number;
  /**
   * `[[emu:tool-listed-after N]]`: every step's `tool_requests_listed` comes after its Nth call (from 1; after its last
   * when it makes fewer), not before its first.
   */
  toolListedAfter?: number;
  /**
   * `[[emu:tool-args-id]]` / `[[emu:tool-args-id N]]`: these client tool calls (every one, or the step's Nth from 1)
   * carry their own `McpArgs.tool_call_id`, not their envelopes' `call_id` (cursor-protocol-addendum-3 T5).
   */
  toolArgsId?: { call?: number };
  /** `[[emu:cached N]]`: the cache_read_tokens turn_ended reports. */
  cachedTokens?: number;
  /** `[[emu:todos …]]`: Cursor's todo list, sent as an update_todos tool call before the reply. */
  todos?: ScriptedTodo[];
  /** `[[emu:task …]]`: a subagent run by Cursor's task tool before the reply. */
  task?: ScriptedTask;
  /** `[[emu:web-search]]` / `[[emu:web-fetch]]`: Cursor-side web tool calls, run before the client tools. */
  webCalls: PlannedWebCall[];
  /** `[[emu:switch-mode]]`: mode switches the model asks for, before the web and client tool calls. */
  modeSwitches: PlannedModeSwitch[];
}

/** A mode switch the model asks the client for (`switch_mode_request_query`, docs/protocol.md §4.9). */
export interface PlannedModeSwitch {
  mode: string;
  explanation: string;
}

/** A server-side web tool call the model makes (cursor-protocol-addendum-2.md §7). */
export type PlannedWebCall = { kind: "search"; query: string } | { kind: "fetch"; url: string };

/** A finished tool call, as the reply reports it. */
export interface CallOutcome {
  name: string;
  text: string;
}

const FILLER = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];

/** Builds the plan of a turn. */
export function planTurn(input: ModelInput): TurnPlan {
  const parsed = parseDirectives(input.userText);
  const plan: TurnPlan = { thinkingTokens: 0, calls: [], textParts: [], webCalls: [], modeSwitches: [] };
  if (parsed.problems.length > 0) plan.textParts.push(`Directive error: ${parsed.problems.join(" ")}`);
  const resumedResults = input.resume ? resultsAfterLastUser(input.history) : [];
  // EPH-style recovery: the results came back as assistant text after the call, not as tool results.
  const textResults = input.resume && resumedResults.length === 0 ? assistantTextAfterLastUser(input.history) : [];
  const answered = resumedResults.length > 0 || textResults.length > 0;
  let content = false;
  let step = 0;
  for (const directive of parsed.directives) {
    if (directive.kind === "then") step++;
    else content = applyDirective(plan, directive, input, answered, step) || content;
  }
  // A resume after tool results (a rebuilt turn: the results are in the state) goes on after the answered steps.
  if (textResults.length > 0) plan.calls = [];
  else if (resumedResults.length > 0) plan.calls = unansweredSteps(plan.calls, resumedResults.length);
  if (resumedResults.length > 0) {
    // A resume after tool results answers from the results in the state instead of calling the tools again.
    plan.textParts.push(replyFromOutcomes(resumedResults));
    content = true;
  } else if (textResults.length > 0) {
    plan.textParts.push(`Tool results arrived as text: ${textResults.join(" ")}`);
    content = true;
  }
  if (!content && parsed.problems.length === 0) plan.textParts.push(`You said: ${parsed.text}`);
  return plan;
}

/** Applies one directive to the plan; true when it produces reply content. */
function applyDirective(
  plan: TurnPlan,
  directive: Exclude<Directive, { kind: "then" }>,
  input: ModelInput,
  answeredFromState: boolean,
  step: number,
): boolean {
  switch (directive.kind) {
    case "tool":
      if (input.declaredTools.includes(directive.name)) {
        plan.calls.push({ kind: "mcp", name: directive.name, args: directive.args, step });
      } else if (input.declaredTools.length === 0) {
        // A request without tools (a client's title request, say) gets a short plain text, not a tool error.
        plan.textParts.push(`Tool call: ${directive.name}`);
      } else plan.textParts.push(`Tool ${directive.name} is not available.`);
      return true;
    case "native":
      if (!toolAllowed(input.request?.allowedTools, NATIVE_TOOL_CALL[directive.native], input.request?.excludedTools)) {
        plan.textParts.push(`Directive refused: ${directive.native} is not an allowed tool`);
      } else plan.calls.push({ kind: "native", native: directive.native, args: directive.args, step });
      return true;
    case "echo-model":
      plan.textParts.push(echoModelLine(input.request));
      return true;
    case "think":
      plan.thinkingTokens += directive.tokens;
      return false;
    case "tokens":
      plan.textParts.push(fillerText(directive.tokens));
      return true;
    case "cached":
      plan.cachedTokens = directive.tokens;
      return false;
    case "rate":
      plan.tokensPerSecond = directive.tokensPerSecond;
      return false;
    case "recall":
      plan.textParts.push(`First message: ${firstUserMessage(input)}`);
      return true;
    case "describe-image":
      plan.textParts.push(describeImages(input.images ?? []));
      return true;
    case "error":
      plan.fault = { kind: "error", code: directive.code };
      return false;
    case "stall":
      plan.fault = { kind: "stall", afterTokens: directive.afterTokens };
      return false;
    case "drop":
      plan.fault = { kind: "drop", afterTokens: directive.afterTokens };
      return false;
    case "overflow":
      plan.fault = directive.once === true ? { kind: "overflow", once: true } : { kind: "overflow" };
      return false;
    case "truncate":
      plan.fault = { kind: "truncate" };
      return false;
    case "abort-exec":
      plan.abortExecAfterMs = directive.afterMs;
      return false;
    case "slow-cancel":
      plan.cancelDelayMs = directive.afterMs;
      return false;
    case "tool-chunks":
      plan.toolChunkSize = directive.size;
      return false;
    case "tool-gap":
      plan.toolGapMs = directive.gapMs;
      return false;
    case "tool-cut":
      plan.toolCut = directive.call;
      return false;
    case "tool-count":
      plan.toolCount = directive.count;
      return false;
    case "tool-listed-after":
      plan.toolListedAfter = directive.call;
      return false;
    case "tool-args-id":
      plan.toolArgsId = directive.call === undefined ? {} : { call: directive.call };
      return false;
    case "todos":
      plan.todos = directive.todos;
      plan.textParts.push(`Todos: ${directive.todos.length}`);
      return true;
    case "task":
      plan.task = directive.task;
      plan.textParts.push(`Task ${directive.task.description}: ${directive.task.steps.length} steps`);
      return true;
    case "web-search":
      if (!answeredFromState) plan.webCalls.push({ kind: "search", query: directive.query });
      return true;
    case "web-fetch":
      if (!answeredFromState) plan.webCalls.push({ kind: "fetch", url: directive.url });
      return true;
    case "switch-mode":
      if (!answeredFromState) plan.modeSwitches.push({ mode: directive.mode, explanation: directive.explanation });
      return true;
  }
}

/**
 * The first user message of the conversation as the state shows it (directives removed), else the new message; a
 * message that held only directives is answered with its directive text.
 */
function firstUserMessage(input: ModelInput): string {
  const first = input.history.find((entry) => entry.role === "user");
  const raw = first?.text ?? (input.resume ? "" : input.userText);
  const text = parseDirectives(raw).text;
  return text === "" ? raw.trim() : text;
}

/**
 * The calls of the steps not yet answered, when the state holds `answered` results of the earliest calls. A step with
 * some of its results is answered (the model goes on from what it has, as a one-step turn always did); the first
 * step with none of them is where the turn goes on.
 */
function unansweredSteps(calls: readonly PlannedCall[], answered: number): PlannedCall[] {
  let done = 0;
  for (const step of new Set(calls.map((call) => call.step))) {
    if (answered <= done) return calls.filter((call) => call.step >= step);
    done += calls.filter((call) => call.step === step).length;
  }
  return [];
}

function resultsAfterLastUser(history: readonly HistoryEntry[]): CallOutcome[] {
  const out: CallOutcome[] = [];
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i];
    if (entry === undefined || entry.role === "user") break;
    if (entry.role === "tool-result") out.unshift({ name: entry.name, text: entry.text });
  }
  return out;
}

/** Non-empty assistant texts after the last user message (the turn already went on from it). */
function assistantTextAfterLastUser(history: readonly HistoryEntry[]): string[] {
  const out: string[] = [];
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i];
    if (entry === undefined || entry.role === "user") break;
    if (entry.role === "assistant" && entry.text.trim() !== "") out.unshift(entry.text.trim());
  }
  return out;
}

/** `NAME returned: <text>` lines, one per call, in call order. */
export function replyFromOutcomes(outcomes: readonly CallOutcome[]): string {
  return outcomes.map((outcome) => `${outcome.name} returned: ${outcome.text}`).join("\n");
}

/** The full reply once the plan's calls have finished. */
export function composeReply(plan: TurnPlan, outcomes: readonly CallOutcome[]): string {
  const parts = [...plan.textParts];
  if (outcomes.length > 0) parts.push(replyFromOutcomes(outcomes));
  return parts.join("\n");
}

/** Exactly `count` tokens of deterministic filler. */
export function fillerText(count: number): string {
  return Array.from({ length: count }, (_, i) => FILLER[i % FILLER.length]).join(" ");
}

/** Deterministic reasoning text of `count` tokens. */
export function thinkingText(count: number): string {
  return Array.from({ length: count }, (_, i) => `thought${i + 1}`).join(" ");
}

/** Splits text into tokens: each word with its trailing whitespace (so joining the tokens gives the text back). */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text === "" ? [] : [text]);
}

/** Rough prompt-size estimate used for `token_details.used_tokens`: 4 characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
