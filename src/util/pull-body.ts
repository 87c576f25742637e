/**
 * The pull-driven response body every streaming surface writes (chat SSE, Anthropic events, Responses events): each
 * read produces one frame from the source, so the writer's backpressure reaches the source with no intermediate
 * TransformStream or generator per frame. The surfaces differ only in how a frame is read and how an error is framed.
 */

/** Callbacks of a streamed body. */
export interface PullBodyOptions {
  /** Called once with the error before its frame is written (for logging); the error is not rethrown. */
  onError?: (error: unknown) => void;
  /** Called once, first thing, when the reader cancels the body (the client went away). */
  onCancel?: (reason: unknown) => void;
  /** Called once when the body is over: last frame enqueued, or canceled and the source released. */
  onEnd?: () => void;
}

/** What one read of the source yields: a frame ("" writes nothing) and whether it is the last one. */
export interface PulledFrame {
  frame: string;
  last: boolean;
}

/** How a surface reads its source. */
export interface PullSource {
  /** Reads the next frame; a throw ends the body with {@link PullSource.errorFrame}. */
  read(): Promise<PulledFrame>;
  /** The frame written for an error the source threw ("" writes nothing). */
  errorFrame(error: unknown): string;
  /** Releases the source when the reader cancels (the source's `return()`). */
  release(): Promise<unknown>;
}

/**
 * Builds the body. A cancel while a read is pending enqueues nothing afterwards; cancelling calls `onCancel`, then
 * `release()`, so the upstream turn is released in its `finally`.
 */
export function pullBody(source: PullSource, options: PullBodyOptions = {}): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let canceled = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    options.onEnd?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let pulled: PulledFrame;
        try {
          pulled = await source.read();
        } catch (error) {
          options.onError?.(error);
          pulled = { frame: source.errorFrame(error), last: true };
        }
        // A cancel while the source was being read: the body is gone, nothing may be enqueued.
        if (canceled) return;
        if (pulled.frame !== "") controller.enqueue(encoder.encode(pulled.frame));
        if (pulled.last) {
          controller.close();
          end();
        }
      },
      async cancel(reason) {
        canceled = true;
        options.onCancel?.(reason);
        try {
          await source.release();
        } finally {
          end();
        }
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * One SSE frame named after the event's `type` (`event: <type>\ndata: <json>\n\n`), as the Anthropic Messages and
 * OpenAI Responses streams frame every event. JSON never contains a raw newline, so one `data:` line suffices.
 */
export function namedEventFrame(event: { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
