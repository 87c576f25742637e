/**
 * Fingerprint of a prefix of the caller's history, stored with a checkpoint so a later turn can tell whether its
 * `messages` still extend what the checkpoint covers (then only the new user message is sent, §5.4) or whether the
 * caller edited history (then state is rebuilt from `messages`). Text is compared after CRLF→LF and trimming, since
 * clients re-serialise messages they send back.
 */
import { createHash } from "node:crypto";
import type { HistoryMessage } from "./types.js";

function normalise(text: string): string {
  return text.replace(/\r\n?/g, "\n").trim();
}

function canonical(message: HistoryMessage): unknown[] {
  switch (message.role) {
    case "system":
    case "user":
      return [message.role, normalise(message.content)];
    case "assistant":
      return [
        "assistant",
        normalise(message.content),
        message.toolCalls.map((call) => [call.id, call.name, normalise(call.arguments)]),
      ];
    case "tool":
      return ["tool", message.toolCallId, normalise(message.content)];
  }
}

/** Hex SHA-256 fingerprint of `messages` (order-sensitive). */
export function historyFingerprint(messages: readonly HistoryMessage[]): string {
  const hash = createHash("sha256").update("cursor-bridge/backend-history/v1");
  for (const message of messages) hash.update(`\n${JSON.stringify(canonical(message))}`);
  return hash.digest("hex");
}
