/**
 * The pull-driven response body every streaming surface writes (chat SSE, Anthropic events, Responses events): each
 * read produces one frame from the source, so the writer's backpressure reaches the source with no intermediate
 * TransformStream or generator per frame. The surfaces differ only in how a frame is read and how an error is framed.
 *
 * Two ways out, same frames: as a web `ReadableStream` (what `app.fetch`/`app.request` callers read), and, for a
 * response built with {@link streamedResponse} that the Node listener serves itself, written straight to the
 * `ServerResponse` ({@link directBodyOf}): one promise per frame, no web-stream reader, no per-frame TextEncoder.
 */
import type { ServerResponse } from "node:http";

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

/** One body's source and bookkeeping, whichever way it is written. */
class PullBodyState {
  canceled = false;
  /** Taken by one writer: the web stream's first pull, or {@link writeTo}. */
  taken: "stream" | "direct" | undefined;
  private ended = false;

  constructor(
    /** Replaced once by {@link PendingStreamedResponse.attach} for a body made before its source. */
    public source: PullSource,
    private readonly options: PullBodyOptions,
  ) {}

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.onEnd?.();
  }

  /** The frame for an error the source threw (reported once through `onError`); it is the last one. */
  failed(error: unknown): PulledFrame {
    this.options.onError?.(error);
    return { frame: this.source.errorFrame(error), last: true };
  }

  /** The next frame; a source error becomes its error frame. One promise hop per frame (this sits on the hot path). */
  async read(): Promise<PulledFrame> {
    try {
      return await this.source.read();
    } catch (error) {
      return this.failed(error);
    }
  }

  async cancel(reason: unknown): Promise<void> {
    if (this.canceled) return;
    this.canceled = true;
    this.options.onCancel?.(reason);
    try {
      await this.source.release();
    } finally {
      this.end();
    }
  }

  /**
   * Writes every frame to `res` (its headers already written) and ends it. The client going away (`close` before
   * the last frame) cancels the body as a web-stream reader's cancel would.
   */
  async writeTo(res: ServerResponse): Promise<void> {
    this.taken = "direct";
    let finished = false;
    let wakeWriter: (() => void) | undefined;
    const onGone = () => {
      if (finished) return;
      wakeWriter?.();
      void this.cancel(undefined).catch(() => undefined);
    };
    res.once("close", onGone);
    try {
      if (res.destroyed) {
        onGone();
        return;
      }
      for (;;) {
        let pulled: PulledFrame;
        try {
          pulled = await this.source.read();
        } catch (error) {
          pulled = this.failed(error);
        }
        // The client went away while the source was being read: nothing more is written.
        if (this.canceled) return;
        const flowing = pulled.frame === "" || res.write(pulled.frame);
        if (pulled.last) {
          finished = true;
          res.end();
          this.end();
          return;
        }
        if (!flowing) {
          await new Promise<void>((resolve) => {
            wakeWriter = resolve;
            res.once("drain", resolve);
          });
          if (wakeWriter !== undefined) res.off("drain", wakeWriter);
          wakeWriter = undefined;
          if (this.canceled) return;
        }
      }
    } finally {
      res.off("close", onGone);
    }
  }
}

/** Bodies by their web stream, and streamed responses by the response (see {@link streamedResponse}). */
const bodies = new WeakMap<ReadableStream<Uint8Array>, PullBodyState>();
const responses = new WeakMap<Response, PullBodyState>();

/**
 * Builds the body. A cancel while a read is pending enqueues nothing afterwards; cancelling calls `onCancel`, then
 * `release()`, so the upstream turn is released in its `finally`.
 */
export function pullBody(source: PullSource, options: PullBodyOptions = {}): ReadableStream<Uint8Array> {
  return webStreamOf(new PullBodyState(source, options));
}

/** Encodes the frames of every web-stream body (a TextEncoder holds no state between calls). */
const encoder = new TextEncoder();

function webStreamOf(state: PullBodyState): ReadableStream<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        state.taken ??= "stream";
        const pulled = await state.read();
        // A cancel while the source was being read: the body is gone, nothing may be enqueued.
        if (state.canceled) return;
        if (pulled.frame !== "") controller.enqueue(encoder.encode(pulled.frame));
        if (pulled.last) {
          controller.close();
          state.end();
        }
      },
      cancel: (reason) => state.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  bodies.set(stream, state);
  return stream;
}

/** A streamed response made before its source exists; see {@link pendingStreamedResponse}. */
export interface PendingStreamedResponse {
  /** The response, to be handed out only once {@link attach} has given it its source. */
  readonly response: Response;
  /** Gives the body its source (once). */
  attach(source: PullSource): void;
}

/**
 * The headers of a streamed response made ahead of its first event, noting whether anything changed them since (the
 * access log, CORS or the gateway's limits may, after their `next()`).
 */
class WatchedHeaders extends Headers {
  changed = false;

  override set(name: string, value: string): void {
    this.changed = true;
    super.set(name, value);
  }

  override append(name: string, value: string): void {
    this.changed = true;
    super.append(name, value);
  }

  override delete(name: string): void {
    this.changed = true;
    super.delete(name);
  }
}

/** The head of a pending streamed response as the Node listener writes it, by the response. */
const heads = new WeakMap<Response, { headers: WatchedHeaders; record: Record<string, string> }>();

/**
 * The headers of a pending streamed response as one object, in the order and with the values its `Headers` would
 * give, made when the response was made; undefined once anything changed them (or for any other response). The Node
 * listener writes the head from it instead of walking the `Headers` on the way from the first event to the head
 * (about 25 µs there in one-stream marks, docs/performance.md).
 */
export function unchangedHeadersOf(response: Response): Record<string, string> | undefined {
  const head = heads.get(response);
  // The Node adapter's response keeps the headers it was given; a full web Response holds a copy of its own.
  if (head === undefined || head.headers.changed || response.headers !== head.headers) return undefined;
  return head.record;
}

/** The source of a pending body until it is attached: nothing reads the body before that. */
const UNATTACHED: PullSource = {
  read: () => Promise.reject(new Error("The streamed body was read before its source was attached.")),
  errorFrame: () => "",
  release: () => Promise.resolve(),
};

/**
 * A {@link streamedResponse} whose source comes later: the web stream, its state, the `Response` and its headers
 * object are made now, so a turn can have them made while it waits for its first event and spend only the source's
 * construction after it (docs/performance.md, "Where one stream's time to first token goes").
 */
export function pendingStreamedResponse(init: ResponseInit, options: PullBodyOptions = {}): PendingStreamedResponse {
  const state = new PullBodyState(UNATTACHED, options);
  const headers = new WatchedHeaders(init.headers);
  const response = streamedResponse(webStreamOf(state), { ...init, headers });
  // Made now, not after the turn: the head as the listener writes it, while nothing changed it.
  const record: Record<string, string> = {};
  headers.forEach((value, key) => {
    record[key] = value;
  });
  heads.set(response, { headers, record });
  return {
    response,
    attach(source) {
      if (state.source !== UNATTACHED) throw new Error("The streamed body already has its source.");
      state.source = source;
    },
  };
}

/** `new Response(body, init)`; when `body` is a {@link pullBody}, the Node listener may write it directly. */
export function streamedResponse(body: ReadableStream<Uint8Array>, init: ResponseInit): Response {
  const response = new Response(body, init);
  const state = bodies.get(body);
  if (state !== undefined) responses.set(response, state);
  return response;
}

/**
 * The direct writer of a response built by {@link streamedResponse} whose body nobody has read yet: call it with the
 * `ServerResponse` once its headers are written (the web stream is then left unread). Undefined otherwise.
 */
export function directBodyOf(response: Response): ((res: ServerResponse) => Promise<void>) | undefined {
  const state = responses.get(response);
  if (state === undefined || state.taken !== undefined || state.canceled) return undefined;
  responses.delete(response);
  state.taken = "direct";
  return (res) => state.writeTo(res);
}

/**
 * One SSE frame named after the event's `type` (`event: <type>\ndata: <json>\n\n`), as the Anthropic Messages and
 * OpenAI Responses streams frame every event. JSON never contains a raw newline, so one `data:` line suffices.
 */
export function namedEventFrame(event: { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
