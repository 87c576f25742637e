/**
 * The last requests the server answered, for the status page: a fixed-size ring buffer fed by the access log
 * (one record per API request once its body is done). Client-supplied text (model, user agent) is cut short here;
 * the page renders it as text, never as markup.
 */

/** One answered request. */
export interface RequestRecord {
  /** When it arrived (epoch ms). */
  at: number;
  method: string;
  path: string;
  /** The API surface: `chat`, `messages`, `responses`, `models`, `count_tokens`, or `other`. */
  surface: string;
  /** The first product of the User-Agent (`claude-cli/2.1.330`, `curl/8.5.0`), when sent. */
  client: string | undefined;
  model: string | undefined;
  /** The parameters sent with the model (`effort=high,thinking=true`), when any. */
  params?: string | undefined;
  /** How the Cursor turn was reached. */
  route: "new" | "continued" | "resumed" | "replayed" | undefined;
  /** The turn ended parked on tool calls. */
  parked: boolean | undefined;
  ttftMs: number | undefined;
  totalMs: number;
  tokens: number | undefined;
  /** Web searches Cursor ran for the request, when any (issue #27). */
  webSearches?: number | undefined;
  /** Web searches / fetches refused because the request offered no such tool (the client saw none of them). */
  webRefused?: number | undefined;
  status: number;
  /** The error code when the stream failed after the status was sent. */
  streamError: string | undefined;
  /** The error code of a failed request (before or after the status was sent). */
  errorCode?: string | undefined;
  /** What the client was told about the failure (the status page shows it on hover). */
  errorMessage?: string | undefined;
}

/** The ring buffer. */
export interface RecentRequests {
  add(record: RequestRecord): void;
  /** Newest first. */
  list(): RequestRecord[];
}

/** Longest client-supplied value kept. */
const MAX_TEXT = 80;

const clamp = (text: string | undefined) =>
  text === undefined ? undefined : text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;

/** The API surface of a path. */
export function surfaceOf(path: string): string {
  if (path === "/v1/chat/completions") return "chat";
  if (path === "/v1/messages/count_tokens") return "count_tokens";
  if (path === "/v1/messages") return "messages";
  if (path === "/v1/responses" || path.startsWith("/v1/responses/")) return "responses";
  if (path === "/v1/models" || path.startsWith("/v1/models/")) return "models";
  return "other";
}

/** `claude-cli/2.1.330 (external, cli)` → `claude-cli/2.1.330`. */
export function clientOf(userAgent: string | undefined): string | undefined {
  const first = userAgent?.trim().split(/\s+/)[0];
  return first === undefined || first === "" ? undefined : clamp(first);
}

/** Creates a buffer keeping the last `capacity` records. */
export function createRecentRequests(capacity = 50): RecentRequests {
  const records: RequestRecord[] = [];
  let next = 0;
  return {
    add(record) {
      const kept = { ...record, path: clamp(record.path) ?? "", model: clamp(record.model) };
      if (record.errorMessage !== undefined) kept.errorMessage = record.errorMessage.slice(0, 300);
      if (records.length < capacity) records.push(kept);
      else records[next] = kept;
      next = (next + 1) % capacity;
    },
    list() {
      if (records.length < capacity) return [...records].reverse();
      return [...records.slice(next), ...records.slice(0, next)].reverse();
    },
  };
}
