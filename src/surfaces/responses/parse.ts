/**
 * Validates a `POST /v1/responses` body. Every rejection is a ProxyError("invalid_request") whose `param` is the
 * exact field path in OpenAI's notation (`input[2].content[0].type`). Item and tool types the bridge cannot use are
 * kept as `ignored` / `unsupported` entries (the translation warns about them), never rejected.
 */
import type { z } from "zod";
import { clampForMessage } from "../../util/logger.js";
import { checkJsonBody } from "../kit/json-body.js";
import { responsesFunctionCallArguments } from "../kit/json-limits.js";
import { normalizeToolArguments } from "../kit/tool-arguments.js";
import { invalidParam, validate } from "../kit/zod-issues.js";
import {
  customToolCallItemSchema,
  customToolCallOutputItemSchema,
  customToolSchema,
  functionCallItemSchema,
  functionCallOutputItemSchema,
  functionToolSchema,
  HANDLED_RESPONSES_KEYS,
  type InputItem,
  jsonSchemaFormatSchema,
  messageItemSchema,
  namespaceToolSchema,
  type ResponsesRequest,
  reasoningItemSchema,
  responsesRequestSchema,
  type Tool,
} from "./request.js";

/** Result of {@link parseResponsesRequest}. */
export interface ParsedResponsesRequest {
  request: ResponsesRequest;
  /** The `input` as items (a string input becomes one user message). */
  items: InputItem[];
  tools: Tool[];
  /** Top-level keys accepted without effect (temperature, text…), in body order. */
  ignoredParams: string[];
}

const invalid = invalidParam;

function check<T>(schema: z.ZodType<T>, value: unknown, prefix: readonly PropertyKey[], root: unknown): T {
  return validate(schema, value, prefix, root, { dialect: "openai" });
}

function parseItem(raw: Record<string, unknown>, index: number, body: unknown): InputItem {
  const path = ["input", index];
  const type = raw.type ?? (raw.role !== undefined ? "message" : undefined);
  switch (type) {
    case "message":
      return { ...check(messageItemSchema, raw, path, body), kind: "message" };
    case "function_call":
      return { ...check(functionCallItemSchema, raw, path, body), kind: "function_call" };
    case "function_call_output":
      return { ...check(functionCallOutputItemSchema, raw, path, body), kind: "function_call_output" };
    case "custom_tool_call":
      return { ...check(customToolCallItemSchema, raw, path, body), kind: "custom_tool_call" };
    case "custom_tool_call_output":
      return { ...check(customToolCallOutputItemSchema, raw, path, body), kind: "custom_tool_call_output" };
    case "reasoning":
      return { ...check(reasoningItemSchema, raw, path, body), kind: "reasoning" };
    case undefined:
      throw invalid(`input[${index}].type`, `Missing required parameter: 'input[${index}].type'.`);
    default:
      if (typeof type !== "string") {
        throw invalid(`input[${index}].type`, `Invalid type for 'input[${index}].type': expected string.`);
      }
      return { kind: "ignored", type };
  }
}

function parseTool(raw: { type: string }, index: number, body: unknown): Tool {
  const path = ["tools", index];
  switch (raw.type) {
    case "function":
      return { ...check(functionToolSchema, raw, path, body), kind: "function" };
    case "custom":
      return { ...check(customToolSchema, raw, path, body), kind: "custom" };
    case "namespace":
      return { ...check(namespaceToolSchema, raw, path, body), kind: "namespace" };
    default: {
      if (!/^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/.test(raw.type))
        return { kind: "unsupported", type: raw.type };
      const filters = (raw as { filters?: { allowed_domains?: unknown } }).filters;
      const domains = Array.isArray(filters?.allowed_domains)
        ? filters.allowed_domains.filter((domain): domain is string => typeof domain === "string")
        : undefined;
      return { kind: "web-search", type: raw.type, allowedDomains: domains };
    }
  }
}

/**
 * The function and custom tools an `allowed_tools` tool choice lists (with their place in its `tools`), or undefined
 * for any other choice. Built-in tools it lists (web search…) are not client tools and are left out.
 */
export function allowedToolNames(
  choice: ResponsesRequest["tool_choice"],
): { name: string; namespace: string | undefined; index: number }[] | undefined {
  if (choice == null || typeof choice !== "object" || choice.type !== "allowed_tools") return undefined;
  const listed = (choice as { tools?: unknown }).tools;
  if (!Array.isArray(listed)) return [];
  return listed.flatMap((tool: unknown, index) => {
    if (typeof tool !== "object" || tool === null) return [];
    const { type, name, namespace } = tool as { type?: unknown; name?: unknown; namespace?: unknown };
    if ((type !== "function" && type !== "custom") || typeof name !== "string") return [];
    return [{ name, namespace: typeof namespace === "string" ? namespace : undefined, index }];
  });
}

/**
 * Parses and validates a Responses request body.
 * @throws ProxyError with code `invalid_request`, status 400 and `param` set to the offending field.
 */
export function parseResponsesRequest(raw: unknown): ParsedResponsesRequest {
  // The kit's limits (object, nesting anywhere, model length) before zod or a translator walks the body.
  const body = checkJsonBody(raw, { jsonStrings: responsesFunctionCallArguments });
  const request = check(responsesRequestSchema, body, [], body);
  const format = request.text?.format;
  if (format?.type === "json_schema") check(jsonSchemaFormatSchema, format, ["text", "format"], body);
  if (request.background === true) {
    throw invalid("background", "Invalid value for 'background': background responses are not supported.");
  }
  const items: InputItem[] =
    typeof request.input === "string"
      ? [{ kind: "message", role: "user", content: request.input }]
      : request.input.map((raw, index) => clientItem(parseItem(raw, index, body), index));
  const tools = (request.tools ?? []).map((raw, index) => parseTool(raw, index, body));
  checkTools(tools, request.tool_choice);
  const ignoredParams = Object.entries(body)
    .filter(([key, value]) => !HANDLED_RESPONSES_KEYS.has(key) && value !== undefined && value !== null)
    .map(([key]) => key);
  return { request, items, tools, ignoredParams };
}

/**
 * What the schema cannot say field by field: two function (or custom) tools of one name in one namespace (the second
 * would otherwise be dropped unseen), and a `tool_choice` that needs tools, or names one the request does not declare.
 */
function checkTools(tools: readonly Tool[], choice: ResponsesRequest["tool_choice"]): void {
  const named = new Set<string>();
  const keys = new Set<string>();
  tools.forEach((tool, index) => {
    // A namespace's functions may be chosen by name too (their own duplicates are the namespace's business).
    if (tool.kind === "namespace") for (const inner of tool.tools) named.add(inner.name);
    if (tool.kind !== "function" && tool.kind !== "custom") return;
    const namespace = tool.kind === "function" ? (tool.namespace ?? "") : "";
    const key = `${namespace}\u0000${tool.name}`;
    if (keys.has(key)) {
      const param = `tools[${index}].name`;
      throw invalid(param, `Invalid value for '${param}': duplicate tool name '${clampForMessage(tool.name, 100)}'.`);
    }
    keys.add(key);
    named.add(tool.name);
  });
  if (choice == null || choice === "auto" || choice === "none") return;
  if (tools.length === 0) {
    throw invalid("tool_choice", "Invalid value for 'tool_choice': it requires 'tools' to be specified.");
  }
  allowedToolNames(choice)?.forEach(({ name, index }) => {
    if (named.has(name)) return;
    const param = `tool_choice.tools[${index}].name`;
    throw invalid(param, `Invalid value for '${param}': no tool named '${clampForMessage(name, 100)}' in 'tools'.`);
  });
  if (typeof choice === "object" && (choice.type === "function" || choice.type === "custom")) {
    if (choice.name === undefined || !named.has(choice.name)) {
      throw invalid(
        "tool_choice.name",
        `Invalid value for 'tool_choice.name': no tool named '${clampForMessage(choice.name ?? "", 100)}' in 'tools'.`,
      );
    }
  }
}

/** A client's own item: its function call arguments normalised (a 400 naming the field when they are no object). */
function clientItem(item: InputItem, index: number): InputItem {
  if (item.kind !== "function_call") return item;
  return { ...item, arguments: normalizeToolArguments(item.arguments, `input[${index}].arguments`) };
}

/** Parses stored input items (already validated once) back into {@link InputItem}s. */
export function parseStoredItems(raw: readonly unknown[]): InputItem[] {
  return raw.map((item, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return { kind: "ignored", type: "unknown" };
    return parseItem(item as Record<string, unknown>, index, { input: raw });
  });
}
