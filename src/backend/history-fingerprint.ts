/**
 * The one history key. A chained SHA-256 over a canonical form of each message answers both questions a turn asks
 * about a client's history, with the same key of the same prefix:
 * - "which conversation does this request extend?": after a turn the engine's conversation index maps the key of
 *   the turn's input → conversation id; a later request looks up the keys of its {@link continuationPrefixes};
 * - "does the stored checkpoint still cover this prefix?": the checkpoint record stores the key of the same input
 *   and its length; `planTurn` compares it with the key of that prefix of the new request.
 * A prefix qualifies when only assistant and tool messages (the turn's own output and tool round trips) lie between
 * it and the request's new user message, which is what `planTurn` requires too.
 *
 * Canonical form (version "v2"), one JSON array per message, chained:
 * - every text: CRLF/CR → LF, then trimmed at both ends;
 * - system:    skipped. System/developer messages inside the list are instructions, tracked apart from the history
 *              (clients such as Claude Code rewrite one on every request);
 * - user:      ["user", text] or ["user", text, [sha256(image bytes), …]] when images are attached;
 * - assistant: ["assistant", text, [[id, name, args], …]] where text first loses one leading `<think>…</think>` block
 *              (a client may echo think-tag output back) and `args` is the arguments JSON re-serialised with object
 *              keys sorted recursively and no whitespace (unparseable arguments: the trimmed raw text). Reasoning
 *              blocks a client echoes back never reach this form;
 * - tool:      ["tool", toolCallId, text];
 * - chain:     k0 = sha256("cursor-bridge/history/v2"); kN = sha256(kN-1 + "\n" + JSON.stringify(messageN)), hex.
 *              A skipped message leaves the key unchanged. The key of an empty history is k0.
 *
 * The conversation index is keyed by a turn's input *and its answer* ({@link answerKey}), not by the input alone: two
 * chats that sent the same first message (the key skips system prompts) got different answers, and each must continue
 * its own conversation; a client that edited the answer before sending it back must not continue a checkpoint that
 * holds the unedited one. The answer is what the client echoes back between the turn's input and its next user
 * message (tool messages there are the client's own input, not part of it):
 * - an answer with tool calls: its calls ({@link callsKey}: ids, names, canonical arguments). The ids are unique to
 *   the answer, the arguments are what a client may edit, and some clients drop the text that came with calls
 *   (`content: null` beside `tool_calls`);
 * - an answer of text only: the text of every assistant message there (one leading `<think>` block dropped from
 *   each), joined, with all whitespace removed, because clients re-wrap answers (Anthropic text blocks, Responses
 *   output items).
 */
import { createHash, hash } from "node:crypto";
import type { HistoryMessage, HistoryToolCall } from "./types.js";

const SEED = "cursor-bridge/history/v2";
const LEADING_THINK = /^\s*<think>[\s\S]*?<\/think>/;

function normaliseText(text: string): string {
  return text.replace(/\r\n?/g, "\n").trim();
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortKeys(item)]));
}

/** JSON text with object keys sorted recursively and no insignificant whitespace; raw trimmed text if unparseable. */
export function canonicalJson(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return normaliseText(text);
  }
}

function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The canonical form of one message; undefined for messages the key skips (instructions). */
function canonical(message: HistoryMessage): unknown[] | undefined {
  switch (message.role) {
    case "system":
      return undefined;
    case "user": {
      const text = normaliseText(message.content);
      const images = message.images ?? [];
      return images.length === 0 ? ["user", text] : ["user", text, images.map((image) => sha256(image.data))];
    }
    case "assistant":
      return [
        "assistant",
        normaliseText(message.content.replace(LEADING_THINK, "")),
        message.toolCalls.map((call) => [call.id, call.name, canonicalJson(call.arguments)]),
      ];
    case "tool":
      return ["tool", message.toolCallId, normaliseText(message.content)];
  }
}

/** Key of an empty history (the chain's seed). */
export const EMPTY_HISTORY_KEY = sha256(SEED);

/** Above this many characters a link is hashed in parts rather than as one concatenated (flattened) string. */
const ONE_SHOT_MAX_CHARS = 64 * 1024;

/** kN from kN-1 and the message's canonical JSON (see the module comment). */
function chain(previous: string, json: string): string {
  // The one-shot hash is cheaper for the many small messages of a long history; a multi-megabyte message is hashed
  // in parts so the concatenation is never materialised. Both give sha256(previous + "\n" + json).
  if (json.length <= ONE_SHOT_MAX_CHARS) return hash("sha256", `${previous}\n${json}`, "hex");
  return createHash("sha256").update(previous).update("\n").update(json).digest("hex");
}

/** Keys of every prefix: element i covers `messages[0..i]` (a skipped message repeats the previous key). */
export function historyKeyPrefixes(messages: readonly HistoryMessage[]): string[] {
  return new HistoryKeyPrefixes(messages).all();
}

/**
 * The keys of {@link historyKeyPrefixes}, each computed when first asked for (and every shorter prefix's with it).
 * The engine needs them before a Run only to look up a conversation the request continues; a request that starts
 * one (a first message) has them hashed after its Run's request has left, in the wait for Cursor's answer.
 */
export class HistoryKeyPrefixes {
  private readonly keys: string[] = [];
  private previous = EMPTY_HISTORY_KEY;

  constructor(private readonly messages: readonly HistoryMessage[]) {}

  /** The key of `messages[0..index]`; undefined outside the messages. */
  at(index: number): string | undefined {
    if (index < 0 || index >= this.messages.length) return undefined;
    const keys = this.keys;
    while (keys.length <= index) {
      const form = canonical(this.messages[keys.length] as HistoryMessage);
      if (form !== undefined) this.previous = chain(this.previous, JSON.stringify(form));
      keys.push(this.previous);
    }
    return keys[index];
  }

  /** Every prefix's key. */
  all(): string[] {
    this.at(this.messages.length - 1);
    return this.keys;
  }

  /** The key of all the messages ({@link EMPTY_HISTORY_KEY} for none). */
  last(): string {
    return this.at(this.messages.length - 1) ?? EMPTY_HISTORY_KEY;
  }
}

/** What {@link answerKey} reads of an answer: its text, as shown or echoed back, and its tool calls. */
export interface TurnAnswer {
  text: string;
  toolCalls: readonly Pick<HistoryToolCall, "id" | "name" | "arguments">[];
}

function canonicalArguments(text: string): string {
  return text.trim() === "" ? "{}" : canonicalJson(text);
}

/** One key for a set of tool calls: ids, names and canonical arguments (`""` = `{}`), order-insensitive. */
export function callsKey(calls: readonly Pick<HistoryToolCall, "id" | "name" | "arguments">[]): string {
  const forms = calls.map((call) => JSON.stringify([call.id, call.name, canonicalArguments(call.arguments)])).sort();
  return hash("sha256", forms.join("\n"), "hex");
}

const WHITESPACE = /\s+/g;

/**
 * The index key of a turn's answer to the history whose key is `inputKey` (see the module comment): the engine
 * records it when the turn ends, from what it handed out; a later request computes it from what it echoes back
 * ({@link echoedAnswer}).
 */
export function answerKey(inputKey: string, answer: TurnAnswer): string {
  if (answer.toolCalls.length > 0) return chain(inputKey, JSON.stringify(["calls", callsKey(answer.toolCalls)]));
  return chain(inputKey, JSON.stringify(["text", answer.text.replace(WHITESPACE, "")]));
}

/** The answer the messages `from` (inclusive) to `to` (exclusive) echo back: their assistant messages' text and calls. */
export function echoedAnswer(messages: readonly HistoryMessage[], from: number, to: number): TurnAnswer {
  let text = "";
  const toolCalls: HistoryToolCall[] = [];
  for (let i = from; i < to; i++) {
    const message = messages[i];
    if (message?.role !== "assistant") continue;
    text += message.content.replace(LEADING_THINK, "");
    toolCalls.push(...message.toolCalls);
  }
  return { text, toolCalls };
}

/** Key of a whole history, insensitive to formatting noise (see the module comment for the exact rules). */
export function historyKey(messages: readonly HistoryMessage[]): string {
  return historyKeyPrefixes(messages).at(-1) ?? EMPTY_HISTORY_KEY;
}

/**
 * Lengths of the prefixes a request may continue from, longest first: every cut inside the run of assistant/tool
 * messages before the request's final user message (or before its trailing tool results), never the whole request.
 * What lies between a cut and {@link answerEnd} is the answer the request echoes back to the turn whose input the cut
 * ends.
 */
export function continuationPrefixes(messages: readonly HistoryMessage[]): number[] {
  const end = answerEnd(messages);
  const lengths: number[] = [];
  for (let cut = end; cut >= 1; cut--) {
    if (cut < messages.length) lengths.push(cut);
    const before = messages[cut - 1];
    if (before?.role !== "assistant" && before?.role !== "tool") break;
  }
  return lengths;
}

/** Where the echoed answers of {@link continuationPrefixes} end: before a final user message, else at the end. */
export function answerEnd(messages: readonly HistoryMessage[]): number {
  return messages.at(-1)?.role === "user" ? messages.length - 1 : messages.length;
}

/** The key a checkpoint record stores for the messages it covers (the same key as {@link historyKey}). */
export const historyFingerprint = historyKey;
