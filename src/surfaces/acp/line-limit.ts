/**
 * The bound on one JSON-RPC line from the editor. The SDK's ndjson reader ends the whole connection on a line over
 * its limit (silently: the agent then exits 0). {@link limitLines} sits in front of it: a line over
 * {@link MAX_LINE_BYTES} is dropped (a line is held until its newline, as the SDK would, so nothing of it reaches
 * the SDK); the rest of it is skipped to its newline, and it is replaced by a small request of the
 * agent's own extension method {@link TOO_LARGE_METHOD} carrying the line's JSON-RPC id (read from the line's first
 * bytes), which the agent answers with an invalid-request error naming the limit. The connection goes on. A line
 * whose id cannot be read (a notification, or no id early in the line) is only reported through `onDropped`.
 */

/** Most bytes of one line (the SDK's default limit). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** The extension method that stands in for a line over the limit. */
export const TOO_LARGE_METHOD = "_cursor-bridge/message_too_large";

/** Bytes at the start of a line searched for its `id`. */
const HEAD_BYTES = 4096;

const NEWLINE = 0x0a;

/** The JSON-RPC id near the start of a line (`"id": 5` or `"id": "x"`), or undefined. */
export function idOf(head: string): number | string | undefined {
  const match = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(head);
  if (match === null) return undefined;
  const value: unknown = JSON.parse(match[1] as string);
  return typeof value === "number" || typeof value === "string" ? value : undefined;
}

/** What the stand-in request says about the dropped line. */
export interface TooLargeParams {
  /** Bytes read of the line before it was dropped (at least the limit). */
  bytes: number;
  limit: number;
}

/** `input` with every line over `limit` bytes replaced as the module comment says. */
export function limitLines(
  input: ReadableStream<Uint8Array>,
  options: { limit?: number; onDropped?(info: { id: number | string | undefined; bytes: number }): void } = {},
): ReadableStream<Uint8Array> {
  const limit = options.limit ?? MAX_LINE_BYTES;
  const encoder = new TextEncoder();
  /** The current line's pieces, held until its newline (the SDK would buffer them as long). */
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  /** Set while the rest of an over-limit line is being skipped. */
  let skipping: { id: number | string | undefined; bytes: number } | undefined;

  const headOf = (piece: Uint8Array): string => {
    const bytes = new Uint8Array(HEAD_BYTES);
    let filled = 0;
    for (const part of [...pending, piece]) {
      if (filled >= HEAD_BYTES) break;
      const take = part.subarray(0, HEAD_BYTES - filled);
      bytes.set(take, filled);
      filled += take.length;
    }
    return new TextDecoder().decode(bytes.subarray(0, filled));
  };

  const finishSkip = (controller: TransformStreamDefaultController<Uint8Array>) => {
    const dropped = skipping as { id: number | string | undefined; bytes: number };
    skipping = undefined;
    options.onDropped?.(dropped);
    if (dropped.id === undefined) return;
    const params: TooLargeParams = { bytes: dropped.bytes, limit };
    const request = { jsonrpc: "2.0", id: dropped.id, method: TOO_LARGE_METHOD, params };
    controller.enqueue(encoder.encode(`${JSON.stringify(request)}\n`));
  };

  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.slice(start, end);
        start = end;
        if (skipping !== undefined) {
          skipping.bytes += piece.length;
          if (newline !== -1) finishSkip(controller);
          continue;
        }
        if (pendingBytes + piece.length - (newline === -1 ? 0 : 1) > limit) {
          skipping = { id: idOf(headOf(piece)), bytes: pendingBytes + piece.length };
          pending = [];
          pendingBytes = 0;
          if (newline !== -1) finishSkip(controller);
          continue;
        }
        pending.push(piece);
        pendingBytes += piece.length;
        if (newline === -1) continue;
        for (const part of pending) controller.enqueue(part);
        pending = [];
        pendingBytes = 0;
      }
    },
    flush(controller) {
      if (skipping !== undefined) finishSkip(controller);
      for (const part of pending) controller.enqueue(part);
    },
  });
  return input.pipeThrough(transform);
}
