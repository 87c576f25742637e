/**
 * Validates a `POST /v1/chat/completions` body. Every rejection is a ProxyError("invalid_request") whose `param`
 * is the exact field path in OpenAI's notation (`messages[2].content[0].type`) and whose message names it too,
 * in the wording OpenAI uses ("Missing required parameter: 'model'.").
 */
import { clampForMessage } from "../../util/logger.js";
import { checkJsonBody } from "../kit/json-body.js";
import { chatToolCallArguments } from "../kit/json-limits.js";
import { normalizeToolArguments } from "../kit/tool-arguments.js";
import { invalidParam, validate } from "../kit/zod-issues.js";
import { fastChatRequest } from "./fast-request.js";
import {
  type ChatCompletionRequest,
  chatCompletionRequestSchema,
  HANDLED_REQUEST_KEYS,
  MESSAGE_ROLES,
} from "./request.js";

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
  // The common shape without zod (fast-request.ts: the same result); anything else, and every rejection, through it.
  const request =
    fastChatRequest(body) ??
    validate(chatCompletionRequestSchema, body, [], body, {
      dialect: "openai",
      discriminatorValues: MESSAGE_ROLES,
    });
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
  if (typeof choice === "object" && choice.type === "allowed_tools") {
    choice.allowed_tools.tools.forEach((tool, index) => {
      if (seen.has(tool.function.name)) return;
      const param = `tool_choice.allowed_tools.tools[${index}].function.name`;
      throw invalid(
        param,
        `Invalid value for '${param}': no tool named '${clampForMessage(tool.function.name, 100)}' in 'tools'.`,
      );
    });
    return;
  }
  if (typeof choice === "object" && !seen.has(choice.function.name)) {
    throw invalid(
      "tool_choice.function.name",
      `Invalid value for 'tool_choice.function.name': no tool named '${clampForMessage(choice.function.name, 100)}' in 'tools'.`,
    );
  }
}

const invalid = invalidParam;
