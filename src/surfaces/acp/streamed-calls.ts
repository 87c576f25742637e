/**
 * MCP tool calls whose arguments stream before their exec (kit/translate.ts hands out the pieces): the first piece
 * shows the call (`tool_call`), each later one a `tool_call_update` whose `rawInput` is the arguments so far. The
 * executor (executor.ts) takes the call over when Cursor's exec arrives: it updates the call it finds shown instead
 * of showing it again, and pieces still queued after that are dropped (the exec's arguments are final).
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";

/** The calls of one prompt shown from their streamed arguments, and those the executor took over. */
export class StreamedCalls {
  /** The `rawInput` last shown of each call, as JSON text. */
  private readonly shown = new Map<string, string>();
  private readonly taken = new Set<string>();

  /** The update that shows arguments text `text` of a streaming call, or undefined once the executor has it. */
  show(toolCallId: string, toolName: string, text: string): SessionUpdate | undefined {
    if (this.taken.has(toolCallId)) return undefined;
    const rawInput = partialJson(text);
    const input = rawInput === undefined ? {} : { rawInput };
    const last = this.shown.get(toolCallId);
    const now = JSON.stringify(rawInput) ?? "";
    if (last !== undefined) {
      // A piece that changes no value so far (a key still forming) shows nothing new.
      if (now === last) return undefined;
      this.shown.set(toolCallId, now);
      return { sessionUpdate: "tool_call_update", toolCallId, ...input };
    }
    this.shown.set(toolCallId, now);
    return { sessionUpdate: "tool_call", toolCallId, title: toolName, kind: "other", status: "pending", ...input };
  }

  /** The executor takes the call over; true when it was already shown. */
  take(toolCallId: string): boolean {
    this.taken.add(toolCallId);
    return this.shown.has(toolCallId);
  }
}

/** How far back a partial text is cut to find a prefix that closes into JSON (an unfinished key or literal). */
const MAX_CUT = 64;

/**
 * The value of a JSON text that may stop anywhere: the longest prefix (cut by at most {@link MAX_CUT} characters)
 * that parses once its open strings, arrays and objects are closed; undefined when none does.
 */
export function partialJson(text: string): unknown {
  for (let end = text.length; end >= Math.max(0, text.length - MAX_CUT); end--) {
    const prefix = text.slice(0, end);
    const closed = prefix + closersOf(prefix);
    try {
      return JSON.parse(closed) as unknown;
    } catch {
      // cut one more character
    }
  }
  return undefined;
}

/** What closes a JSON prefix: the open string's quote, then the open arrays' and objects' brackets. */
function closersOf(prefix: string): string {
  const open: string[] = [];
  let inString = false;
  let escaped = false;
  for (const char of prefix) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") open.push("}");
    else if (char === "[") open.push("]");
    else if (char === "}" || char === "]") open.pop();
  }
  return (inString ? '"' : "") + open.reverse().join("");
}
