/**
 * The engine's {@link BackendEvent} stream → Anthropic Messages streaming events, and the same events folded into
 * one non-streaming `message` (one translation path for both). Block order follows the turn: thinking (closed with
 * its `signature_delta`), text, tool_use (one `input_json_delta` with the whole arguments object).
 */

import type { BackendEvent, TurnEndReason, Usage, WebReference } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import { turnNeverEnded } from "../kit/run-surface.js";
import { toAnthropicToolId } from "./ids.js";
import { citationsFor, webBlocks } from "./web-blocks.js";
import type { AnthropicMessage, AnthropicUsage, ResponseContentBlock, StopReason, StreamEvent } from "./wire.js";

export interface AnthropicEventOptions {
  /** `msg_…` id of the response. */
  id: string;
  /** The model id echoed back (the one the client asked for). */
  model: string;
  /** Whether the client asked for thinking; reasoning events are dropped otherwise. */
  reasoning: boolean;
  /** Signs a finished thinking block's text; the result is the block's opaque `signature`. */
  sign: (thinking: string) => string;
}

const STOP_REASON: Record<TurnEndReason, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  "tool-calls": "tool_use",
};

function parseArguments(text: string, toolName: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === "" ? "{}" : text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ProxyError(
    "backend_protocol",
    `The model's call to tool '${toolName}' carried arguments that are not a JSON object.`,
  );
}

/**
 * Translates one turn's events; throws if the source ends without its `turn-end`. Ending the iteration early (the
 * client left) releases the source, even before the first event was pulled: a generator that never started would
 * skip its own `finally`, so the release sits in an explicit `return()`.
 */
export function toAnthropicEvents(
  events: AsyncIterable<BackendEvent>,
  options: AnthropicEventOptions,
): AsyncIterableIterator<StreamEvent> {
  const source = events[Symbol.asyncIterator]();
  const release = async () => {
    await source.return?.();
  };
  const inner = (async function* () {
    try {
      yield* translate(source, options);
    } catch (error) {
      await release();
      throw error;
    }
  })();
  const iterator: AsyncIterableIterator<StreamEvent> = {
    next: () => inner.next(),
    return: async () => {
      try {
        return await inner.return(undefined);
      } finally {
        await release();
      }
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/**
 * Backend usage in Anthropic's naming: `input_tokens` excludes cache reads and writes, which Cursor's own counts
 * (docs/protocol.md §4.6) report separately.
 */
export function toAnthropicUsage(usage: Usage): AnthropicUsage {
  if (usage.source !== "cursor") return { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
}

async function* translate(
  source: AsyncIterator<BackendEvent>,
  options: AnthropicEventOptions,
): AsyncGenerator<StreamEvent> {
  const usage: AnthropicUsage = { input_tokens: 0, output_tokens: 0 };
  yield {
    type: "message_start",
    message: {
      id: options.id,
      type: "message",
      role: "assistant",
      model: options.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage },
    },
  };
  let index = -1;
  let open: { kind: "text"; text: string } | { kind: "thinking"; text: string } | undefined;
  let stop: StopReason | undefined;
  /** Results of the turn's searches so far: text that names one of their URLs cites it. */
  const references: WebReference[] = [];
  const web = { web_search_requests: 0, web_fetch_requests: 0 };
  function* close(): Generator<StreamEvent> {
    if (open === undefined) return;
    if (open.kind === "text") {
      for (const citation of citationsFor(open.text, references)) {
        yield { type: "content_block_delta", index, delta: { type: "citations_delta", citation } };
      }
    }
    if (open.kind === "thinking") {
      yield {
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: options.sign(open.text) },
      };
    }
    yield { type: "content_block_stop", index };
    open = undefined;
  }
  for (let next = await source.next(); next.done !== true; next = await source.next()) {
    const event = next.value;
    switch (event.type) {
      case "text-delta":
        if (event.text === "") break;
        if (open?.kind !== "text") {
          yield* close();
          open = { kind: "text", text: "" };
          yield { type: "content_block_start", index: ++index, content_block: { type: "text", text: "" } };
        }
        open.text += event.text;
        yield { type: "content_block_delta", index, delta: { type: "text_delta", text: event.text } };
        break;
      case "reasoning-delta":
        if (!options.reasoning || event.text === "") break;
        if (open?.kind !== "thinking") {
          yield* close();
          open = { kind: "thinking", text: "" };
          yield {
            type: "content_block_start",
            index: ++index,
            content_block: { type: "thinking", thinking: "", signature: "" },
          };
        }
        open.text += event.text;
        yield { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: event.text } };
        break;
      case "reasoning-end":
        if (open?.kind === "thinking") yield* close();
        break;
      case "tool-call": {
        const input = parseArguments(event.arguments, event.toolName);
        yield* close();
        index += 1;
        const id = toAnthropicToolId(event.toolCallId);
        yield {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id, name: event.toolName, input: {} },
        };
        const json = JSON.stringify(input);
        yield { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } };
        yield { type: "content_block_stop", index };
        break;
      }
      case "web-search":
      case "web-fetch": {
        yield* close();
        const blocks = webBlocks(event);
        yield { type: "content_block_start", index: ++index, content_block: { ...blocks.use, input: {} } };
        const json = JSON.stringify(blocks.use.input);
        yield { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } };
        yield { type: "content_block_stop", index };
        yield { type: "content_block_start", index: ++index, content_block: blocks.result };
        yield { type: "content_block_stop", index };
        if (event.status === "completed" && event.type === "web-search") {
          web.web_search_requests++;
          references.push(...event.references);
        } else if (event.status === "completed") web.web_fetch_requests++;
        break;
      }
      case "usage":
        Object.assign(usage, toAnthropicUsage(event.usage));
        break;
      case "turn-end":
        stop = STOP_REASON[event.reason];
        break;
      case "checkpoint":
        break;
    }
  }
  yield* close();
  if (stop === undefined) throw turnNeverEnded();
  if (web.web_search_requests + web.web_fetch_requests > 0) usage.server_tool_use = web;
  yield { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage };
  yield { type: "message_stop" };
}

/** Folds the streaming events into the non-streaming `message` object. */
export async function toAnthropicMessage(
  events: AsyncIterable<BackendEvent>,
  options: AnthropicEventOptions,
): Promise<AnthropicMessage> {
  let message: AnthropicMessage | undefined;
  const content: ResponseContentBlock[] = [];
  const json = new Map<number, string>();
  for await (const event of toAnthropicEvents(events, options)) {
    if (event.type === "message_start") message = event.message;
    else if (event.type === "content_block_start") content[event.index] = { ...event.content_block };
    else if (event.type === "content_block_delta") {
      const block = content[event.index];
      const delta = event.delta;
      if (block?.type === "text" && delta.type === "text_delta") block.text += delta.text;
      else if (block?.type === "thinking" && delta.type === "thinking_delta") block.thinking += delta.thinking;
      else if (block?.type === "thinking" && delta.type === "signature_delta") block.signature = delta.signature;
      else if (block?.type === "text" && delta.type === "citations_delta")
        block.citations = [...(block.citations ?? []), delta.citation];
      else if (delta.type === "input_json_delta")
        json.set(event.index, (json.get(event.index) ?? "") + delta.partial_json);
    } else if (event.type === "message_delta" && message !== undefined) {
      message.stop_reason = event.delta.stop_reason;
      message.usage = { ...event.usage };
    }
  }
  for (const [index, text] of json) {
    const block = content[index];
    if (block?.type === "tool_use" || block?.type === "server_tool_use") block.input = JSON.parse(text) as object;
  }
  if (message === undefined) throw new ProxyError("internal", "No message was produced.");
  return { ...message, content };
}
