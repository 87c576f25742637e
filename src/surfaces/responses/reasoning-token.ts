/**
 * The bridge's own `encrypted_content` for reasoning items. Cursor gives no opaque reasoning payload, so the bridge
 * issues one: a versioned prefix and the reasoning text, base64url-encoded. It is not secret (the client already
 * received the text); it lets the bridge recognise its own items when a client such as Codex echoes them back.
 * A foreign value (from OpenAI or another proxy) is not ours to read and is ignored.
 */

const PREFIX = "cbr1.";

/** Encodes reasoning text as the bridge's `encrypted_content`. */
export function encodeReasoningToken(text: string): string {
  return `${PREFIX}${Buffer.from(text, "utf8").toString("base64url")}`;
}

/** The reasoning text of a bridge-issued `encrypted_content`, or undefined for anything else. */
export function decodeReasoningToken(token: string): string | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  const body = token.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(body)) return undefined;
  return Buffer.from(body, "base64url").toString("utf8");
}
