/**
 * Tool call arguments a client sends back in its history, normalised once by the surface's parser, before any
 * translator sees them: every door hands the engine a JSON object text, and anything else is a 400 naming the field
 * (never a mid-stream failure after the Run has started). Chat `tool_calls[].function.arguments` and Responses
 * `function_call.arguments` are JSON texts checked here; an Anthropic `tool_use.input` is the object itself, which
 * the Messages schema requires to be an object (a 400 naming `messages.i.content.j.input` otherwise).
 */
import { ProxyError } from "../../util/errors.js";
import { isJsonObject } from "../../util/json-value.js";

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", `Invalid value for '${param}': ${message}`, {
    param,
    detail: "invalid_field",
  });
}

/**
 * The arguments text to carry: empty (or blank) arguments are `{}` (clients send "" for a call without
 * parameters); a JSON object is kept as sent (the history key canonicalises it).
 * @throws ProxyError invalid_request (400) at `param` when the text is not a JSON object.
 */
export function normalizeToolArguments(text: string, param: string): string {
  if (text.trim() === "") return "{}";
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw invalid(param, "the tool call's arguments are not valid JSON.");
  }
  if (!isJsonObject(value)) throw invalid(param, "the tool call's arguments must be a JSON object.");
  return text;
}
