/**
 * A validated Responses request (its items already expanded with a stored `previous_response_id` chain) → the
 * engine's neutral {@link EngineRequest}. Consecutive assistant-side items (reasoning, assistant message, tool calls)
 * fold into one assistant message; `instructions` and `system`/`developer` messages are instructions; images must be
 * data URLs (the bridge never fetches a URL for the client). What cannot be honoured is listed in `warnings`.
 */
import type { HistoryToolCall, ReasoningEffort } from "../../backend/types.js";
import type { ConversationMessage, EngineRequest, MessagePart, ReasoningBlock } from "../../engine/types.js";
import { ProxyError } from "../../util/errors.js";
import { ImageBudget } from "../kit/image-input.js";
import { type JsonOutputFormat, jsonOutputInstruction, jsonOutputWarning } from "../kit/json-output.js";
import { choiceFromEffort, withChoice } from "../kit/model-choice.js";
import { allowedToolNames } from "./parse.js";
import { decodeReasoningToken } from "./reasoning-token.js";
import type { ContentPart, InputItem, ResponsesRequest, Tool } from "./request.js";
import { customHistoryCall, flatToolName, type ToolMap, toClientTools, toToolChoice } from "./tools.js";

/** What {@link toEngineRequest} derives from a request. */
export interface ResponsesTurnInput {
  request: EngineRequest;
  /** Cursor-visible tool name → Responses tool, to map calls back. */
  toolMap: ToolMap;
  /** Human-readable notes about what is not (or only approximately) honoured. */
  warnings: string[];
}

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", message, { param });
}

/** Decodes an `input_image` part's data URL into an image part (the bytes decide its type). */
export function imagePart(url: string | null | undefined, param: string, images: ImageBudget): MessagePart {
  if (url == null) {
    throw invalid(param, `Invalid value for '${param}': only images given as data URLs are supported (no file_id).`);
  }
  const image = images.decode(url, param);
  return { type: "image", mimeType: image.mimeType, data: image.data };
}

function partText(part: ContentPart): string | undefined {
  if (part.type === "refusal") return part.refusal;
  if (part.type === "input_image") return undefined;
  return part.text;
}

function joinedText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  return content
    .map(partText)
    .filter((text) => text !== undefined)
    .join("\n");
}

function userParts(content: string | readonly ContentPart[], index: number, images: ImageBudget): MessagePart[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map((part, j) =>
    part.type === "input_image"
      ? imagePart(part.image_url, `input[${index}].content[${j}].image_url`, images)
      : { type: "text", text: partText(part) ?? "" },
  );
}

function toolOutputText(
  output: string | readonly { type: string; text?: string | undefined }[],
  warnings: Set<string>,
): string {
  if (typeof output === "string") return output;
  const texts: string[] = [];
  for (const part of output) {
    if (typeof part.text === "string") texts.push(part.text);
    else warnings.add(`tool output parts of type '${part.type}' were dropped (text only)`);
  }
  return texts.join("\n");
}

function reasoningBlock(item: Extract<InputItem, { kind: "reasoning" }>): ReasoningBlock {
  const summary = item.summary.map((part) => part.text).join("\n");
  const token = item.encrypted_content ?? undefined;
  const text = token === undefined ? undefined : decodeReasoningToken(token);
  // Only the bridge's own payload is carried back; a foreign one is ignored (its summary still counts as text).
  return text === undefined || token === undefined ? { text: summary } : { text, opaque: token };
}

/** Folds the items into neutral messages. */
export function toConversation(
  items: readonly InputItem[],
  warnings: Set<string>,
  images: ImageBudget = new ImageBudget(),
  /** How many of `items` came from the stored response `previous_response_id` names, before the request's own. */
  stored = 0,
): ConversationMessage[] {
  const messages: ConversationMessage[] = [];
  let assistant: { text: string[]; reasoning: ReasoningBlock[]; toolCalls: HistoryToolCall[] } | undefined;
  const flush = () => {
    if (assistant === undefined) return;
    messages.push({
      role: "assistant",
      text: assistant.text.join("\n"),
      reasoning: assistant.reasoning,
      toolCalls: assistant.toolCalls,
    });
    assistant = undefined;
  };
  const open = (startsNew: boolean) => {
    if (assistant !== undefined && startsNew) flush();
    assistant ??= { text: [], reasoning: [], toolCalls: [] };
    return assistant;
  };
  items.forEach((item, index) => {
    switch (item.kind) {
      case "message":
        if (item.role === "assistant") {
          const current = open(assistant !== undefined && assistant.toolCalls.length > 0);
          current.text.push(joinedText(item.content));
          return;
        }
        flush();
        if (item.role === "user") messages.push({ role: "user", parts: userParts(item.content, index, images) });
        else messages.push({ role: "system", text: joinedText(item.content) });
        return;
      case "reasoning": {
        const current = open(assistant !== undefined && (assistant.text.length > 0 || assistant.toolCalls.length > 0));
        current.reasoning.push(reasoningBlock(item));
        return;
      }
      case "function_call":
        open(false).toolCalls.push({
          id: item.call_id,
          name: flatToolName(item.namespace, item.name),
          arguments: item.arguments,
        });
        return;
      case "custom_tool_call":
        open(false).toolCalls.push(customHistoryCall(item.call_id, item.name, item.input));
        return;
      case "function_call_output":
      case "custom_tool_call_output":
        flush();
        messages.push({
          role: "tool",
          toolCallId: item.call_id,
          content: toolOutputText(item.output, warnings),
          isError: false,
          param: index < stored ? "previous_response_id" : `input[${index - stored}].call_id`,
        });
        return;
      case "ignored":
        // A web_search_call the bridge produced comes back with the history: Cursor's state holds the search.
        if (item.type !== "web_search_call") warnings.add(`input items of type '${item.type}' were ignored`);
        return;
    }
  });
  flush();
  return messages;
}

function toEffort(effort: NonNullable<ResponsesRequest["reasoning"]>["effort"]): ReasoningEffort | undefined {
  if (effort == null) return undefined;
  if (effort === "minimal") return "low";
  if (effort === "xhigh" || effort === "max") return "high";
  return effort;
}

/** `text.format` as the kit's structured output (the parser checked a `json_schema` one's `name` and `schema`). */
function toJsonOutput(format: { type: string; [key: string]: unknown }): JsonOutputFormat | undefined {
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type !== "json_schema") return undefined;
  const { name, description, schema } = format;
  return {
    type: "json_schema",
    name: typeof name === "string" ? name : undefined,
    description: typeof description === "string" ? description : undefined,
    schema,
  };
}

/** Builds the engine request from the parsed request and its full (expanded) item list. */
export function toEngineRequest(
  request: ResponsesRequest,
  items: readonly InputItem[],
  tools: readonly Tool[],
  images: ImageBudget = new ImageBudget(),
  /** How many of `items` came from the stored response `previous_response_id` names (see {@link toConversation}). */
  stored = 0,
): ResponsesTurnInput {
  const warnings: string[] = [];
  const itemWarnings = new Set<string>();
  const messages = toConversation(items, itemWarnings, images, stored);
  if (messages.length === 0) {
    throw invalid("input", "Invalid value for 'input': the request has no input items the bridge can use.");
  }
  const clientTools = toClientTools(tools, warnings);
  // `allowed_tools`: only the tools it lists are offered (the parser checked that each is declared).
  const allowed = allowedToolNames(request.tool_choice);
  if (allowed !== undefined) {
    const names = new Set(allowed.map(({ name, namespace }) => flatToolName(namespace, name)));
    // A namespace's function listed by its own name alone counts too.
    const bare = new Set(allowed.flatMap(({ name, namespace }) => (namespace === undefined ? [name] : [])));
    clientTools.tools = clientTools.tools.filter(
      (tool) => names.has(tool.name) || bare.has(clientTools.map.get(tool.name)?.name ?? ""),
    );
  }
  const toolChoice = toToolChoice(request.tool_choice, warnings);
  const effort = request.reasoning?.effort;
  const instructions = request.instructions ? [request.instructions] : [];
  const format = request.text?.format;
  const json = format == null ? undefined : toJsonOutput(format);
  if (json !== undefined) {
    instructions.push(jsonOutputInstruction(json));
    warnings.push(jsonOutputWarning("text.format", json));
  } else if (format != null && format.type !== "text") {
    warnings.push(`text.format '${format.type}' is not enforced by Cursor`);
  }
  return {
    request: {
      model: request.model,
      instructions,
      messages,
      tools: clientTools.tools,
      ...(clientTools.serverTools === undefined ? {} : { serverTools: clientTools.serverTools }),
      // Cursor may still make several calls in a step: the client gets them one per response.
      ...(request.parallel_tool_calls === false ? { oneToolCallPerAnswer: true } : {}),
      options: {
        reasoning: effort !== "none",
        reasoningEffort: toEffort(effort),
        toolChoice,
        ...withChoice(choiceFromEffort(effort)),
      },
    },
    toolMap: clientTools.map,
    warnings: [...warnings, ...itemWarnings],
  };
}
