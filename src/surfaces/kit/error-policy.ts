/**
 * What every API door answers for an error, decided once: the HTTP status, whether a retry can help
 * (`x-should-retry`, which openai-node and the Anthropic SDK both honour, "true" or "false" on every door), when
 * (`Retry-After`), and the message a client may see (redacted, never a stack, never an internal error's text, the
 * login hint for Cursor auth failures). An error may carry headers of its own (a virtual key's `x-ratelimit-*` state
 * on its 429 `rate_limit_exceeded` / `key_budget_exceeded`, src/gateway/limits); they are sent as they are, under the
 * retry decision. A surface only renders this in its own shape (kit/openai-error.ts for the
 * OpenAI doors, messages/error-body.ts for Anthropic's).
 */
import { withLauncher } from "../../util/command-hint.js";
import { isAbortError, ProxyError, type ProxyErrorDetails } from "../../util/errors.js";
import { redactText } from "../../util/logger.js";

/**
 * `detail` of the proxy's own API key check, so the 401 says which key is wrong (the local one) instead of telling
 * the user to log in to Cursor.
 */
export const LOCAL_API_KEY_DETAIL = "local_api_key" satisfies ProxyErrorDetails["unauthenticated"];

const LOGIN_HINT = "Run `cursor-bridge login` to sign in to Cursor.";

/** The decision every surface renders. */
export interface ErrorDecision {
  /** The error as a ProxyError (anything else became a generic `internal`, aborts `canceled`). */
  error: ProxyError;
  status: number;
  /** `x-should-retry` and, when known, `Retry-After` (whole seconds, rounded up). */
  headers: Record<string, string>;
  /** What the client may read. */
  message: string;
}

/**
 * Whose wording a door speaks. Only a context overflow differs: each door says "too long" the way its clients
 * recognise it (OpenAI's "maximum context length" sentence, Anthropic's "prompt is too long: N tokens > M maximum"),
 * which is what makes OpenCode and Claude Code compact the conversation and try again.
 */
export type ErrorDialect = "openai" | "anthropic" | "acp";

/** Context of {@link decideError}. */
export interface ErrorContext {
  /** Named in the message of an internal error, so a user can find its log line. */
  requestId?: string | undefined;
  /** The door's wording; the ProxyError's own message when absent. */
  dialect?: ErrorDialect | undefined;
  /**
   * The client is a team member (it sent a virtual key), not the operator: its messages never tell it to run one of
   * the server's commands, which only the operator can run; they say whom to tell instead.
   */
  remote?: boolean | undefined;
}

/** A sentence naming one of the server's commands (`cursor-bridge login`, `npm run --silent cli -- keys …`). */
const OPERATOR_SENTENCE = /[^.;]*`(?:cursor-bridge|npm run --silent cli --)\s[^`]*`[^.;]*[.;]?/g;

/** Where the server looked for its login: `(looked in /home/…/credentials.json)`. */
const LOOKED_IN = /\s*\(looked in [^)]*\)/g;
/** A file of the server's named in a message: `the credential file /home/…/x.json`, `the lock /…/x.lock`. */
const SERVER_FILE = /\b(file|lock|directory) (?:[A-Za-z]:)?[\\/][^\s`'",;)]*/g;

/**
 * The message for a team member: sentences naming an operator command become one pointer to the operator, and the
 * server's own file paths are left out (they tell a team member about the server's machine, and only its operator can
 * act on them).
 */
export function forRemoteClient(message: string): string {
  const kept = message
    .replace(LOOKED_IN, "")
    .replace(SERVER_FILE, "$1 on the server")
    .replace(OPERATOR_SENTENCE, " ")
    .replace(/\s+/g, " ")
    .trim();
  return kept === message ? message : `${kept} The person who runs this server can fix it.`.trim();
}

/** Anything thrown → ProxyError: foreign errors become a generic `internal` whose text is never sent. */
export function asProxyError(error: unknown): ProxyError {
  if (error instanceof ProxyError) return error;
  if (isAbortError(error)) return ProxyError.from(error);
  return new ProxyError("internal", "Internal server error.", { cause: error, detail: "unexpected" });
}

/** A context overflow in the door's "too long" wording; undefined for every other error. */
function contextOverflowMessage(error: ProxyError, dialect: ErrorDialect | undefined): string | undefined {
  const size = error.contextLength;
  if (error.code !== "context_length_exceeded" || size === undefined || dialect === undefined) return undefined;
  switch (dialect) {
    case "openai":
      return (
        `This model's maximum context length is ${size.limit} tokens. However, your messages resulted in ` +
        `${size.tokens} tokens. Please reduce the length of the messages.`
      );
    case "anthropic":
      return `prompt is too long: ${size.tokens} tokens > ${size.limit} maximum`;
    case "acp":
      // The estimate counts only what this turn sends: a conversation continued from Cursor's checkpoint holds more
      // than it, so an estimate under the limit is no size to show (Cursor said the conversation is too long).
      return size.tokens > size.limit
        ? `The conversation is too long for the model: ${size.tokens} tokens > ${size.limit} maximum. ` +
            "Start a new session or run /compact."
        : `The conversation is too long for the model's ${size.limit}-token context window. ` +
            "Start a new session or run /compact.";
  }
}

function messageFor(
  error: ProxyError,
  requestId: string | undefined,
  dialect: ErrorDialect | undefined,
  remote: boolean,
): string {
  const message = localMessageFor(error, requestId, dialect);
  const spoken = dialect === "acp" ? forEditor(message) : message;
  return remote ? forRemoteClient(spoken) : spoken;
}

/** The HTTP doors' pointer to the model list (`GET /v1/models lists them`), in whatever sentence it ends. */
const MODEL_LIST_HINT = /\(?GET \/v1\/models lists (?:them|the models)\)?/g;

/** The message for an editor (ACP): a hint only an HTTP client can follow points to what the editor shows. */
export function forEditor(message: string): string {
  return message.replace(MODEL_LIST_HINT, (hint) =>
    hint.startsWith("(") ? "(the session's Model option lists them)" : "The session's Model option lists the models",
  );
}

function localMessageFor(error: ProxyError, requestId: string | undefined, dialect?: ErrorDialect): string {
  const tooLong = contextOverflowMessage(error, dialect);
  if (tooLong !== undefined) return tooLong;
  // An internal error is a bug of ours: its message (an exception's text) stays in the log, never in the answer.
  if (error.code === "internal") {
    return requestId === undefined
      ? "Internal server error."
      : `Internal server error (request id ${requestId}; the server log has the details).`;
  }
  const message = withLauncher(redactText(error.message)).trim() || "Request failed.";
  if (error.code === "unauthenticated" && error.detail !== LOCAL_API_KEY_DETAIL && !message.includes("login")) {
    return withLauncher(`${message} ${LOGIN_HINT}`);
  }
  return message;
}

/** Decides status, retry headers and message for anything thrown. */
export function decideError(thrown: unknown, context: ErrorContext = {}): ErrorDecision {
  const error = asProxyError(thrown);
  // The error's own headers first (a key's rate-limit state); the retry decision below always wins.
  const headers: Record<string, string> = { ...error.headers, "x-should-retry": error.retryable ? "true" : "false" };
  if (error.retryAfterSeconds !== undefined && error.retryAfterSeconds >= 0) {
    headers["Retry-After"] = String(Math.ceil(error.retryAfterSeconds));
  }
  return {
    error,
    status: error.status,
    headers,
    message: messageFor(error, context.requestId, context.dialect, context.remote === true),
  };
}

/** A JSON error response from a decision and the surface's body. */
export function errorJsonResponse(decision: ErrorDecision, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status: decision.status,
    headers: { ...decision.headers, "content-type": "application/json; charset=utf-8" },
  });
}
