/**
 * Responses tools ↔ the engine's client tools. `function` tools pass through; the functions of a `namespace` tool are
 * flattened to `<namespace>__<name>` (a namespace ending in `_` is joined directly, so Codex's `mcp__server__`
 * namespaces give the familiar `mcp__server__tool`); a `custom` tool (free-form text input, e.g. Codex's
 * `apply_patch` with a Lark grammar) becomes a function with one string argument `input`, its grammar in the
 * description. Built-in tools (`web_search`, `tool_search`…) are dropped with a warning. Calls are mapped back to
 * `function_call` (with `namespace`) or `custom_tool_call` items.
 */
import type { ClientTool, HistoryToolCall, JsonValue, ServerTools } from "../../backend/types.js";
import type { ToolChoice } from "../../engine/types.js";
import type { ResponsesRequest, Tool } from "./request.js";

/** What a Cursor-visible tool name stands for on the Responses side. */
export type ToolTarget = { kind: "function"; name: string; namespace?: string } | { kind: "custom"; name: string };

/** Cursor-visible tool name → Responses tool. */
export type ToolMap = ReadonlyMap<string, ToolTarget>;

const DEFAULT_PARAMETERS: { [key: string]: JsonValue } = { type: "object", properties: {} };

/** The flat name a namespaced function is declared to Cursor under. */
export function flatToolName(namespace: string | null | undefined, name: string): string {
  if (namespace == null || namespace === "") return name;
  return namespace.endsWith("_") ? `${namespace}${name}` : `${namespace}__${name}`;
}

function customDescription(tool: Extract<Tool, { kind: "custom" }>): string {
  const lines = [tool.description ?? ""];
  lines.push("The `input` argument is the tool's free-form text input (not JSON), passed to the tool verbatim.");
  const format = tool.format;
  if (format?.type === "grammar" && format.definition) {
    lines.push(`\`input\` must match this ${format.syntax ?? ""} grammar:\n${format.definition}`);
  }
  return lines.filter((line) => line !== "").join("\n\n");
}

function customSchema(): { [key: string]: JsonValue } {
  return {
    type: "object",
    properties: { input: { type: "string", description: "The free-form text input of the tool." } },
    required: ["input"],
    additionalProperties: false,
  };
}

/** The result of {@link toClientTools}. */
export interface ClientToolSet {
  tools: ClientTool[];
  map: ToolMap;
  /** `web_search` offered: Cursor's searches are approved within its domain filter (issue #27). */
  serverTools: ServerTools | undefined;
}

/** Maps the request's tools; unsupported and duplicate ones are dropped and described in `warnings`. */
export function toClientTools(tools: readonly Tool[], warnings: string[]): ClientToolSet {
  const out: ClientTool[] = [];
  const map = new Map<string, ToolTarget>();
  const add = (tool: ClientTool, target: ToolTarget) => {
    if (map.has(tool.name)) {
      warnings.push(`tool '${tool.name}' is declared twice; the second declaration was dropped`);
      return;
    }
    map.set(tool.name, target);
    out.push(tool);
  };
  const dropped = new Set<string>();
  let serverTools: ServerTools | undefined;
  for (const tool of tools) {
    switch (tool.kind) {
      case "function":
        add(
          { name: tool.name, description: tool.description ?? "", inputSchema: toSchema(tool.parameters) },
          { kind: "function", name: tool.name },
        );
        break;
      case "namespace":
        for (const fn of tool.tools) {
          const name = flatToolName(tool.name, fn.name);
          const description = [tool.description ?? "", fn.description ?? ""].filter((text) => text !== "").join("\n\n");
          add(
            { name, description, inputSchema: toSchema(fn.parameters) },
            { kind: "function", name: fn.name, namespace: tool.name },
          );
        }
        break;
      case "custom":
        add(
          { name: tool.name, description: customDescription(tool), inputSchema: customSchema() },
          { kind: "custom", name: tool.name },
        );
        break;
      case "unsupported":
        dropped.add(tool.type);
        break;
      case "web-search":
        serverTools = {
          webSearch: tool.allowedDomains === undefined ? {} : { allowedDomains: tool.allowedDomains },
          // Cursor's web fetch is the search's "open page" action in the Responses shapes.
          webFetch: tool.allowedDomains === undefined ? {} : { allowedDomains: tool.allowedDomains },
        };
        break;
    }
  }
  if (dropped.size > 0) {
    warnings.push(`built-in tools the bridge cannot run were dropped: ${[...dropped].join(", ")}`);
  }
  return { tools: out, map, serverTools };
}

function toSchema(parameters: Record<string, unknown> | null | undefined): { [key: string]: JsonValue } {
  return (parameters as { [key: string]: JsonValue } | null | undefined) ?? DEFAULT_PARAMETERS;
}

/** The JSON arguments a custom tool call is declared to Cursor with. */
export function customArguments(input: string): string {
  return JSON.stringify({ input });
}

/** A custom tool's free-form input from Cursor's JSON arguments (the raw text when they are not `{input}`). */
export function customInput(argumentsText: string): string {
  try {
    const parsed = JSON.parse(argumentsText) as unknown;
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { input?: unknown }).input === "string") {
      return (parsed as { input: string }).input;
    }
  } catch {
    // Not JSON: Cursor sent the text itself.
  }
  return argumentsText;
}

/** A history tool call for a `custom_tool_call` item. */
export function customHistoryCall(callId: string, name: string, input: string): HistoryToolCall {
  return { id: callId, name, arguments: customArguments(input) };
}

/** `tool_choice` → the engine's constraint; choices naming a built-in tool become `auto` with a warning. */
export function toToolChoice(choice: ResponsesRequest["tool_choice"], warnings: string[]): ToolChoice {
  if (choice == null) return "auto";
  if (typeof choice === "string") return choice;
  if ((choice.type === "function" || choice.type === "custom") && choice.name !== undefined) {
    const namespace = typeof choice.namespace === "string" ? choice.namespace : undefined;
    return { name: flatToolName(namespace, choice.name) };
  }
  if (choice.type === "allowed_tools") return (choice as { mode?: unknown }).mode === "required" ? "required" : "auto";
  warnings.push(`tool_choice of type '${choice.type}' is not supported; using 'auto'`);
  return "auto";
}
