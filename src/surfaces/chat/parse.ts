/**
 * Validates a `POST /v1/chat/completions` body. Every rejection is a ProxyError("invalid_request") whose `param`
 * is the exact field path in OpenAI's notation (`messages[2].content[0].type`) and whose message names it too,
 * in the wording OpenAI uses ("Missing required parameter: 'model'.").
 */
import type { z } from "zod";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage } from "../../util/logger.js";
import { checkJsonBody } from "../kit/json-body.js";
import { chatToolCallArguments } from "../kit/json-limits.js";
import { formatParamPath } from "../kit/param-path.js";
import { normalizeToolArguments } from "../kit/tool-arguments.js";
import {
  type ChatCompletionRequest,
  chatCompletionRequestSchema,
  HANDLED_REQUEST_KEYS,
  MESSAGE_ROLES,
} from "./chat-request.js";

type Issue = z.core.$ZodIssue;

/** Result of {@link parseChatCompletionRequest}. */
export interface ParsedChatCompletionRequest {
  request: ChatCompletionRequest;
  /** Top-level keys that were accepted but have no effect (temperature, seed, unknown extras…), in body order. */
  ignoredParams: string[];
}

/**
 * Parses and validates a chat completion request body.
 * @throws ProxyError with code `invalid_request`, status 400 and `param` set to the offending field.
 */
export function parseChatCompletionRequest(raw: unknown): ParsedChatCompletionRequest {
  // Before anything walks the body recursively (zod, history normalisation, protobuf): no stack overflow, no Run.
  const body = checkJsonBody(raw, { jsonStrings: chatToolCallArguments });
  const result = chatCompletionRequestSchema.safeParse(body);
  if (!result.success) {
    const first = result.error.issues[0];
    if (first === undefined) throw new ProxyError("invalid_request", "Invalid request body.");
    throw issueToError(first, [], body);
  }
  const request = result.data;
  checkSemantics(request);
  request.messages.forEach((message, i) => {
    if (message.role !== "assistant") return;
    message.tool_calls?.forEach((call, j) => {
      const param = `messages[${i}].tool_calls[${j}].function.arguments`;
      call.function.arguments = normalizeToolArguments(call.function.arguments, param);
    });
  });
  const ignoredParams = Object.entries(body)
    .filter(([key, value]) => !HANDLED_REQUEST_KEYS.has(key) && value !== undefined && value !== null)
    .map(([key]) => key);
  return { request, ignoredParams };
}

/** Rules zod cannot express field by field: n, duplicate tools, tool_choice consistency. */
function checkSemantics(request: ChatCompletionRequest): void {
  if (request.n != null && request.n > 1) {
    throw invalid("n", `Invalid value for 'n': only n=1 is supported, got ${request.n}.`);
  }
  const tools = request.tools ?? [];
  const seen = new Set<string>();
  tools.forEach((tool, index) => {
    if (seen.has(tool.function.name)) {
      const param = `tools[${index}].function.name`;
      throw invalid(
        param,
        `Invalid value for '${param}': duplicate tool name '${clampForMessage(tool.function.name, 100)}'.`,
      );
    }
    seen.add(tool.function.name);
  });
  const choice = request.tool_choice;
  if (choice == null || choice === "auto" || choice === "none") return;
  if (tools.length === 0) {
    throw invalid("tool_choice", "Invalid value for 'tool_choice': it requires 'tools' to be specified.");
  }
  if (typeof choice === "object" && !seen.has(choice.function.name)) {
    throw invalid(
      "tool_choice.function.name",
      `Invalid value for 'tool_choice.function.name': no tool named '${clampForMessage(choice.function.name, 100)}' in 'tools'.`,
    );
  }
}

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", message, { param });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" && Number.isInteger(value)) return "an integer";
  return `a ${typeof value}`;
}

/** Turns the first zod issue into a ProxyError naming the field; `prefix` is the path of an enclosing union. */
function issueToError(issue: Issue, prefix: readonly PropertyKey[], body: unknown): ProxyError {
  const path = [...prefix, ...issue.path];
  const param = formatParamPath(path);
  const input = valueAt(body, path);
  if (input === undefined && issue.code !== "custom") {
    return invalid(param, `Missing required parameter: '${param}'.`);
  }
  switch (issue.code) {
    case "invalid_type":
      return invalid(param, `Invalid type for '${param}': expected ${issue.expected}, but got ${describeType(input)}.`);
    case "invalid_value":
      return invalid(
        param,
        `Invalid value for '${param}': expected one of ${formatValues(issue.values)}, got ${shown(input)}.`,
      );
    case "invalid_union":
      return unionToError(issue, path, body);
    case "too_small":
      return invalid(param, tooSmallMessage(issue, param));
    case "custom":
      return invalid(param, issue.message.replace(/\.$/, ` (at '${param}').`));
    default:
      return invalid(param, `Invalid value for '${param}': ${issue.message}.`);
  }
}

/** A rejected value as the message shows it: JSON, escaped and cut (a client may send a megabyte). */
function shown(value: unknown): string {
  return clampForMessage(JSON.stringify(value) ?? String(value), 100);
}

function formatValues(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join(", ");
}

/**
 * Discriminated unions (message role) report the allowed discriminators; plain unions (string | parts) report the
 * branch that got furthest, so an image part inside a content array names `…content[0].type`, not `…content`.
 */
function unionToError(issue: z.core.$ZodIssueInvalidUnion, path: PropertyKey[], body: unknown): ProxyError {
  const param = formatParamPath(path);
  const input = valueAt(body, path);
  if (issue.discriminator !== undefined) {
    const allowed = "options" in issue && issue.options !== undefined ? issue.options : MESSAGE_ROLES;
    const values = formatValues(allowed);
    return invalid(param, `Invalid value for '${param}': expected one of ${values}, got ${shown(input)}.`);
  }
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    for (const candidate of branch) {
      if (best === undefined || candidate.path.length > best.path.length) best = candidate;
    }
  }
  if (best === undefined || best.path.length === 0) {
    const expected = issue.errors.flatMap((branch) => branch.map(expectedOf)).filter((text) => text !== "");
    const choices = expected.length > 0 ? [...new Set(expected)].join(" or ") : "a different value";
    return invalid(param, `Invalid type for '${param}': expected ${choices}, but got ${describeType(input)}.`);
  }
  return issueToError(best, path, body);
}

function expectedOf(issue: Issue): string {
  if (issue.code === "invalid_type") return issue.expected;
  if (issue.code === "invalid_value") return formatValues(issue.values);
  return "";
}

function tooSmallMessage(issue: z.core.$ZodIssueTooSmall, param: string): string {
  const minimum = Number(issue.minimum);
  if (issue.origin === "array") return `Invalid value for '${param}': expected at least ${minimum} item(s).`;
  if (issue.origin === "string") return `Invalid value for '${param}': must not be empty.`;
  return `Invalid value for '${param}': expected a number ${issue.inclusive ? ">=" : ">"} ${minimum}.`;
}
