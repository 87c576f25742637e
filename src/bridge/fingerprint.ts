/**
 * History fingerprints for conversation matching. The server stores
 * `fingerprintMessages([...history, assistantReply])` → conversation after a reply, and on the next request looks
 * up the fingerprint of the request's prefix (see {@link fingerprintPrefixes}) to continue from the checkpoint
 * instead of replaying history.
 *
 * Normalisation (version "v1"); each message becomes a JSON array, then fingerprints are chained with SHA-256:
 * - every text: CRLF/CR → LF, then trimmed at both ends;
 * - system:    ["system", text]        (developer messages already became system in toTurnInput)
 * - user:      ["user", text]
 * - assistant: ["assistant", text, [[id, name, args], …]] where text first loses one leading `<think>…</think>`
 *              block (a client may echo think-tag output back), and `args` is the arguments JSON re-serialised with
 *              object keys sorted recursively and no whitespace (unparseable arguments: the trimmed raw text);
 * - tool:      ["tool", toolCallId, text]
 * - chain:     h0 = sha256("cursor-bridge/history/v1"); hN = sha256(hN-1 + "\n" + JSON.stringify(messageN)),
 *              hex-encoded. The fingerprint of an empty history is h0.
 * Chaining makes every prefix's fingerprint available in one pass.
 */
import { createHash } from "node:crypto";
import type { HistoryMessage } from "../backend/types.js";

const SEED = "cursor-bridge/history/v1";
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

function normaliseMessage(message: HistoryMessage): unknown[] {
  switch (message.role) {
    case "system":
    case "user":
      return [message.role, normaliseText(message.content)];
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

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Fingerprint of an empty history (the chain's seed). */
export const EMPTY_HISTORY_FINGERPRINT = sha256(SEED);

/** Fingerprints of every non-empty prefix: element i covers `messages[0..i]`. */
export function fingerprintPrefixes(messages: readonly HistoryMessage[]): string[] {
  const out: string[] = [];
  let previous = EMPTY_HISTORY_FINGERPRINT;
  for (const message of messages) {
    previous = sha256(`${previous}\n${JSON.stringify(normaliseMessage(message))}`);
    out.push(previous);
  }
  return out;
}

/** Fingerprint of a whole history, insensitive to formatting noise (see the module comment for the exact rules). */
export function fingerprintMessages(messages: readonly HistoryMessage[]): string {
  return fingerprintPrefixes(messages).at(-1) ?? EMPTY_HISTORY_FINGERPRINT;
}
