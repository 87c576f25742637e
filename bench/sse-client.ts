/**
 * A lean chat client for the benchmark: POSTs `/v1/chat/completions` with `stream: true` over node:http (keep-alive,
 * no socket limit) and reads the SSE frames as they arrive, recording when the first content delta came; or with
 * `stream: false` (completeOnce) and times the whole answer.
 * Lighter than an SDK on purpose, so the client's own cost stays small next to the bridge's.
 */
import { Agent, type IncomingMessage, request } from "node:http";

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** A tool call accumulated from streamed deltas. */
export interface StreamedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What one streamed completion produced, with `performance.now()` timings. */
export interface StreamedCompletion {
  startedAt: number;
  firstContentAt: number | undefined;
  endedAt: number;
  text: string;
  /** SSE data frames carrying a non-empty content delta. */
  contentChunks: number;
  /** Every SSE data frame except `[DONE]`. */
  frames: number;
  toolCalls: StreamedToolCall[];
  finishReason: string | undefined;
}

interface ChunkShape {
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  error?: { message?: string };
}

function applyFrame(result: StreamedCompletion, data: string): void {
  const chunk = JSON.parse(data) as ChunkShape;
  if (chunk.error !== undefined) throw new Error(`stream error: ${chunk.error.message ?? data}`);
  result.frames++;
  const choice = chunk.choices?.[0];
  const content = choice?.delta?.content;
  if (typeof content === "string" && content !== "") {
    result.firstContentAt ??= performance.now();
    result.text += content;
    result.contentChunks++;
  }
  for (const delta of choice?.delta?.tool_calls ?? []) {
    const call = result.toolCalls[delta.index] ?? { id: "", name: "", arguments: "" };
    result.toolCalls[delta.index] = call;
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name = delta.function.name;
    call.arguments += delta.function?.arguments ?? "";
  }
  if (choice?.finish_reason) result.finishReason = choice.finish_reason;
}

/**
 * POSTs `payload` to `${baseURL}/chat/completions` with `apiKey` as the Bearer token; `read` turns the response into
 * the result. A request that reused a kept-alive socket the server had just closed (its 5 s keep-alive timeout:
 * ECONNRESET before the request reached it) is sent once more on a fresh socket, as any HTTP client does: a new
 * connection of its own, since the pool's other idle sockets (a thousand after the 1,000-stream case) may have
 * been closed at the same moment.
 */
function postChat<T>(
  baseURL: string,
  payload: Buffer,
  apiKey: string,
  read: (res: IncomingMessage, resolve: (value: T) => void, reject: (error: unknown) => void) => void,
): Promise<T> {
  const attempt = (mayRetry: boolean): Promise<T> =>
    new Promise((resolve, reject) => {
      const req = request(
        `${baseURL}/chat/completions`,
        {
          method: "POST",
          // The retry (mayRetry false) goes on a connection of its own.
          agent: mayRetry ? agent : false,
          headers: {
            "content-type": "application/json",
            "content-length": payload.length,
            authorization: `Bearer ${apiKey}`,
          },
        },
        (res) => read(res, resolve, reject),
      );
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (mayRetry && req.reusedSocket && error.code === "ECONNRESET") attempt(false).then(resolve, reject);
        else reject(error);
      });
      req.end(payload);
    });
  return attempt(true);
}

/**
 * Streams one completion from `baseURL` (`http://127.0.0.1:PORT/v1`), sending `apiKey` as the Bearer token.
 * `startedAt` is taken before the first attempt, so a resend's extra time counts against the side that needed it.
 */
export function streamCompletion(
  baseURL: string,
  body: Record<string, unknown>,
  apiKey = "bench",
): Promise<StreamedCompletion> {
  const payload = Buffer.from(JSON.stringify({ ...body, stream: true }));
  const startedAt = performance.now();
  return postChat<StreamedCompletion>(baseURL, payload, apiKey, (res, resolve, reject) => {
    if (res.statusCode !== 200) {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (part: string) => (text += part));
      res.on("end", () => reject(new Error(`HTTP ${res.statusCode}: ${text}`)));
      return;
    }
    const result: StreamedCompletion = {
      startedAt,
      firstContentAt: undefined,
      endedAt: 0,
      text: "",
      contentChunks: 0,
      frames: 0,
      toolCalls: [],
      finishReason: undefined,
    };
    let buffer = "";
    res.setEncoding("utf8");
    res.on("data", (part: string) => {
      buffer += part;
      try {
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!frame.startsWith("data: ")) continue;
          const data = frame.slice(6);
          if (data !== "[DONE]") applyFrame(result, data);
        }
      } catch (error) {
        res.destroy();
        reject(error);
      }
    });
    res.on("end", () => {
      result.endedAt = performance.now();
      resolve(result);
    });
    res.on("error", reject);
  });
}

/** What one non-streaming completion produced. */
export interface Completed {
  startedAt: number;
  endedAt: number;
  /** The parsed response body. */
  body: { choices?: { message?: { content?: string | null }; finish_reason?: string }[] };
}

/** One non-streaming completion (`stream: false`): resolves when the whole JSON body has arrived. */
export function completeOnce(baseURL: string, body: Record<string, unknown>, apiKey = "bench"): Promise<Completed> {
  const payload = Buffer.from(JSON.stringify({ ...body, stream: false }));
  const startedAt = performance.now();
  return postChat<Completed>(baseURL, payload, apiKey, (res, resolve, reject) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (part: string) => (text += part));
    res.on("end", () => {
      const endedAt = performance.now();
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${text}`));
      else resolve({ startedAt, endedAt, body: JSON.parse(text) as Completed["body"] });
    });
    res.on("error", reject);
  });
}

/** Closes idle keep-alive sockets (so the process can exit). */
export function closeIdleSockets(): void {
  agent.destroy();
}
