/**
 * What travels between instances when a tool result is forwarded: the engine's surface-neutral request as JSON
 * (image bytes base64), and the owner's turn as newline-delimited JSON frames (`start`, one `event` per engine
 * event, then `end` or `error`). Surface-neutral on purpose: every API surface forwards the same way.
 */
import type { BackendEvent, ModelInfo } from "../backend/types.js";
import type { EngineRequest, ParkedRelease, TurnRoute } from "../engine/index.js";
import { ProxyError, type ProxyErrorCode } from "../util/errors.js";

/** The path instances accept forwarded turns on. */
export const FORWARD_PATH = "/internal/cluster/turn";

/**
 * The path instances are told on that a conversation moved on past tool calls they handed out (a new message instead
 * of the results): a JSON {@link ParkedRelease}, answered `{"released": n}`.
 */
export const RELEASE_PATH = "/internal/cluster/release";

/** The {@link ParkedRelease} of a release body; a malformed one is a 400. */
export function decodeParkedRelease(text: string): ParkedRelease {
  let value: Partial<Record<keyof ParkedRelease, unknown>> | undefined;
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    value = undefined;
  }
  const ids = value?.toolCallIds;
  const optional = (field: unknown) => field === undefined || typeof field === "string";
  if (
    !Array.isArray(ids) ||
    ids.length > 1_000 ||
    !ids.every((id) => typeof id === "string") ||
    !optional(value?.owner) ||
    !optional(value?.account)
  ) {
    throw new ProxyError("invalid_request", "The release request is not valid.", { detail: "bad_request" });
  }
  return {
    toolCallIds: ids as string[],
    owner: value?.owner as string | undefined,
    account: value?.account as string | undefined,
  };
}

/** One line of a forwarded turn. */
export type TurnFrame =
  | { type: "start"; route: TurnRoute; model: ModelInfo }
  | { type: "event"; event: BackendEvent }
  | { type: "end"; parked: boolean }
  | { type: "error"; error: WireError };

/** A ProxyError as JSON. */
export interface WireError {
  code: ProxyErrorCode;
  message: string;
  status: number;
  retryable: boolean;
  detail?: string | undefined;
  param?: string | undefined;
}

/** The request as JSON text. */
export function encodeEngineRequest(request: EngineRequest): string {
  return JSON.stringify(request, (_key, value: unknown) =>
    value instanceof Uint8Array ? { $bytes: Buffer.from(value).toString("base64") } : value,
  );
}

/** The request back from {@link encodeEngineRequest}; a malformed body is a 400. */
export function decodeEngineRequest(text: string): EngineRequest {
  try {
    const value = JSON.parse(text, (_key, item: unknown) => {
      if (typeof item === "object" && item !== null && "$bytes" in item) {
        const bytes = (item as { $bytes: unknown }).$bytes;
        if (typeof bytes === "string") return new Uint8Array(Buffer.from(bytes, "base64"));
      }
      return item;
    }) as Partial<EngineRequest>;
    if (typeof value.model !== "string" || !Array.isArray(value.messages) || !Array.isArray(value.tools)) {
      throw new Error("not an engine request");
    }
    return value as EngineRequest;
  } catch (error) {
    throw new ProxyError("invalid_request", "The forwarded request is not a valid engine request.", {
      cause: error,
      detail: "bad_request",
    });
  }
}

/** A ProxyError (or anything thrown) as JSON. */
export function toWireError(error: unknown): WireError {
  const proxy = ProxyError.from(error);
  return {
    code: proxy.code,
    message: proxy.message,
    status: proxy.status,
    retryable: proxy.retryable,
    detail: proxy.detail,
    param: proxy.param,
  };
}

/** The ProxyError a {@link WireError} describes. */
export function fromWireError(error: WireError): ProxyError {
  return new ProxyError(error.code, error.message, {
    status: error.status,
    retryable: error.retryable,
    ...(error.param === undefined ? {} : { param: error.param }),
    // The detail came from a ProxyError of the same code on the other instance.
    ...(error.detail === undefined ? {} : { detail: error.detail as never }),
  });
}

/** Splits a byte stream into NDJSON frames. */
export async function* readFrames(body: AsyncIterable<Uint8Array>): AsyncGenerator<TurnFrame> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line !== "") yield JSON.parse(line) as TurnFrame;
      newline = buffered.indexOf("\n");
    }
  }
  if (buffered.trim() !== "") yield JSON.parse(buffered) as TurnFrame;
}
