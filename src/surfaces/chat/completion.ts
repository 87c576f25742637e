/**
 * Non-streaming responses. Built by folding the chunk stream from {@link toChatCompletionChunks}, so streamed and
 * non-streamed replies can never disagree about content, reasoning, tool calls or finish reason.
 */
import type { BackendEvent } from "../../backend/types.js";
import { type ChunkStreamOptions, toChatCompletionChunks } from "./events.js";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessage,
  ChatCompletionMessageToolCall,
  CompletionUsage,
  FinishReason,
  UrlCitationAnnotation,
} from "./wire.js";

/** Options for {@link toChatCompletion}: those of the chunk stream, except that usage is always collected. */
export type CompletionOptions = Omit<ChunkStreamOptions, "includeUsage" | "toolArgumentsChunkSize">;

interface Accumulator {
  content: string;
  reasoning: string;
  toolCalls: ChatCompletionMessageToolCall[];
  finishReason: FinishReason;
  usage: CompletionUsage;
  annotations: UrlCitationAnnotation[];
}

/** Folds one chunk's delta into the accumulator; tool-call fragments are merged by `index`. */
function accumulate(acc: Accumulator, chunk: ChatCompletionChunk): void {
  if (chunk.usage) acc.usage = chunk.usage;
  for (const choice of chunk.choices) {
    const { delta } = choice;
    if (choice.finish_reason !== null) acc.finishReason = choice.finish_reason;
    if (delta.content !== undefined) acc.content += delta.content;
    if (delta.reasoning_content !== undefined) acc.reasoning += delta.reasoning_content;
    if (delta.annotations !== undefined) acc.annotations.push(...delta.annotations);
    for (const call of delta.tool_calls ?? []) {
      const existing = acc.toolCalls[call.index];
      if (existing) {
        existing.function.arguments += call.function.arguments;
      } else {
        acc.toolCalls[call.index] = {
          id: call.id ?? "",
          type: "function",
          function: { name: call.function.name ?? "", arguments: call.function.arguments },
        };
      }
    }
  }
}

/** Collects a backend segment into one `chat.completion` object (content null when only tool calls were made). */
export async function toChatCompletion(
  events: AsyncIterable<BackendEvent>,
  options: CompletionOptions,
): Promise<ChatCompletion> {
  const acc: Accumulator = {
    content: "",
    reasoning: "",
    toolCalls: [],
    finishReason: "stop",
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    annotations: [],
  };
  for await (const chunk of toChatCompletionChunks(events, { ...options, includeUsage: true })) {
    accumulate(acc, chunk);
  }
  const message: ChatCompletionMessage = {
    role: "assistant",
    content: acc.content === "" && acc.toolCalls.length > 0 ? null : acc.content,
    refusal: null,
  };
  if (options.reasoning === "reasoning_content" && acc.reasoning !== "") message.reasoning_content = acc.reasoning;
  if (acc.toolCalls.length > 0) message.tool_calls = acc.toolCalls;
  if (acc.annotations.length > 0) message.annotations = acc.annotations;
  return {
    id: options.id,
    object: "chat.completion",
    created: options.created,
    model: options.model,
    choices: [{ index: 0, message, finish_reason: acc.finishReason, logprobs: null }],
    usage: acc.usage,
    ...(options.systemFingerprint === undefined ? {} : { system_fingerprint: options.systemFingerprint }),
  };
}
