/**
 * The token channel between the OpenCode plugin (the parent, in OpenCode's Bun runtime) and the `cursor-bridge serve`
 * child it starts. In plugin mode OpenCode's auth store holds the Cursor credentials and only the plugin can write
 * it (`client.auth.set`), so the child never refreshes: it asks the parent for an access token over its own stdio,
 * one JSON object per line. The child writes requests to stdout (after the one `--json` startup line); the parent
 * answers on the child's stdin. The child's stdin reaching EOF means the parent is gone.
 *
 * Both sides import this file; it is the whole contract.
 */

/** Environment variable that puts `cursor-bridge serve` into plugin-child mode; its value names the channel. */
export const PARENT_IPC_ENV = "CURSOR_BRIDGE_PARENT_IPC";
/** The only channel so far: JSON lines over the child's stdin/stdout. */
export const PARENT_IPC_STDIO = "stdio";

/** Child → parent. `refresh` names the token Cursor rejected, so the parent refreshes at most once for it. */
export type ParentRequest = { id: number; op: "token" } | { id: number; op: "refresh"; rejected: string };

/** Parent → child: a token, or a failure the child turns into a ProxyError of that code. */
export type ParentReply =
  | { id: number; ok: true; accessToken: string }
  | { id: number; ok: false; code: string; message: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isRecord(value) && typeof value.id === "number" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A request line from the child, or undefined for anything else (ignored, never fatal). */
export function parseParentRequest(line: string): ParentRequest | undefined {
  const value = parseLine(line);
  if (value === undefined) return undefined;
  const id = value.id as number;
  if (value.op === "token") return { id, op: "token" };
  if (value.op === "refresh" && typeof value.rejected === "string")
    return { id, op: "refresh", rejected: value.rejected };
  return undefined;
}

/** A reply line from the parent, or undefined for anything else. */
export function parseParentReply(line: string): ParentReply | undefined {
  const value = parseLine(line);
  if (value === undefined) return undefined;
  const id = value.id as number;
  if (value.ok === true && typeof value.accessToken === "string" && value.accessToken !== "") {
    return { id, ok: true, accessToken: value.accessToken };
  }
  if (value.ok === false && typeof value.code === "string" && typeof value.message === "string") {
    return { id, ok: false, code: value.code, message: value.message };
  }
  return undefined;
}

/** Splits a byte stream into lines; `push` returns the complete lines seen so far. */
export function createLineSplitter(maxLineBytes = 1024 * 1024): { push(chunk: string): string[] } {
  let buffer = "";
  return {
    push(chunk) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      // A runaway line without a newline is dropped rather than held forever.
      if (buffer.length > maxLineBytes) buffer = "";
      return lines.map((line) => line.trim()).filter((line) => line !== "");
    },
  };
}
