/**
 * A Cursor usage limit is a 429 `insufficient_quota` (a virtual key's spent budget a 429 `key_budget_exceeded`) with
 * `x-should-retry: false`: the openai and Anthropic SDKs and
 * Claude Code show it at once, the AI SDK after its two short retries. Two clients hide it, so they get it in the one
 * form each shows at once, recognised by their User-Agent:
 *
 * - OpenCode (`opencode/…`, with a provider block or the cursor-bridge plugin) retries every 429 whatever the headers
 *   say, five times with backoff (about 80 s of silence). It shows any other 4xx at once, unless the message looks
 *   transient to it (a status number, "rate limit", "try again later" …): it gets a 402 with the same body, the
 *   remaining time written in words.
 * - Codex (`codex_…`) replaces a 429 `insufficient_quota` with its own "Quota exceeded" text (the reset time is lost)
 *   and retries any other status. A `response.failed` event whose error code it treats as final (`invalid_prompt`)
 *   is shown verbatim, after one request: on /v1/responses it gets that stream.
 */
import type { Context, MiddlewareHandler, Next } from "hono";

/** The clients answered differently. */
export type SteeredClient = "opencode" | "codex";

/** The client a User-Agent names, when it is one whose retry rules would hide a usage limit. */
export function steeredClient(userAgent: string | undefined): SteeredClient | undefined {
  if (userAgent === undefined) return undefined;
  if (/^opencode\//i.test(userAgent)) return "opencode";
  if (/^codex[_-]\w*\//i.test(userAgent)) return "codex";
  return undefined;
}

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [86_400, "day"],
  [3_600, "hour"],
  [60, "minute"],
];

/** `5 days 2 hours`, `3 hours 10 minutes`, `12 minutes`, `less than a minute`: at most two units, no digit runs. */
export function durationInWords(seconds: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(seconds));
  for (const [size, name] of UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 && parts.length < 2) parts.push(`${count} ${name}${count === 1 ? "" : "s"}`);
    else if (parts.length > 0) break;
  }
  return parts.length > 0 ? parts.join(" ") : "less than a minute";
}

const UNIT_SECONDS: Record<string, number> = { d: 86_400, h: 3_600, min: 60, s: 1 };

/**
 * The message with "(in 432000 s)" or "(in 5 d 2 h)" (util/duration.ts) written as "(in 5 days 2 hours)": OpenCode
 * retries a message holding a status-like number.
 */
export function withDurationsInWords(message: string): string {
  return message.replace(/\(in ((?:\d+ (?:d|h|min|s)\b ?)+)\)/g, (_, spans: string) => {
    let seconds = 0;
    for (const [, count, unit] of spans.matchAll(/(\d+) (d|h|min|s)\b/g)) {
      seconds += Number(count) * (UNIT_SECONDS[unit ?? "s"] ?? 1);
    }
    return `(in ${durationInWords(seconds)})`;
  });
}

interface ErrorBody {
  error: { message: string; type: string; param: unknown; code: string };
}

async function usageLimitBody(response: Response): Promise<ErrorBody | undefined> {
  if (response.status !== 429) return undefined;
  try {
    const body = (await response.clone().json()) as Partial<ErrorBody>;
    const code = body.error?.code;
    return (code === "insufficient_quota" || code === "key_budget_exceeded") && typeof body.error?.message === "string"
      ? (body as ErrorBody)
      : undefined;
  } catch {
    return undefined;
  }
}

function openCodeAnswer(body: ErrorBody, requestId: string | null): Response {
  const message = withDurationsInWords(body.error.message);
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "x-should-retry": "false",
  };
  if (requestId !== null) headers["x-request-id"] = requestId;
  return new Response(JSON.stringify({ error: { ...body.error, message } }), { status: 402, headers });
}

function codexAnswer(body: ErrorBody, requestId: string | null): Response {
  const response = {
    id: `resp_${requestId ?? "usage_limit"}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "in_progress",
    output: [],
  };
  const failed = { ...response, status: "failed", error: { code: "invalid_prompt", message: body.error.message } };
  const events = [
    ["response.created", { type: "response.created", sequence_number: 0, response }],
    ["response.failed", { type: "response.failed", sequence_number: 1, response: failed }],
  ] as const;
  const text = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  const headers: Record<string, string> = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
  };
  if (requestId !== null) headers["x-request-id"] = requestId;
  return new Response(text, { status: 200, headers });
}

/** Rewrites a usage-limit answer for OpenCode and Codex (see the file comment); every other answer passes unchanged. */
export function steerUsageLimits(): MiddlewareHandler {
  // The client is known from the request: any other passes straight on, with no frame of this guard to resume on the
  // way back to its answer's first byte (request-guard.ts, guardHost).
  return (c: Context, next) => {
    const client = steeredClient(c.req.header("user-agent"));
    if (client === undefined || (client === "codex" && c.req.path !== "/v1/responses")) return next();
    return steer(c, next, client);
  };
}

async function steer(c: Context, next: Next, client: SteeredClient): Promise<void> {
  await next();
  const body = await usageLimitBody(c.res);
  if (body === undefined) return;
  const requestId = c.res.headers.get("x-request-id");
  await c.res.body?.cancel();
  // Cleared first: assigning over a response merges its headers (content-length, retry-after) into the new one.
  c.res = undefined;
  c.res = client === "opencode" ? openCodeAnswer(body, requestId) : codexAnswer(body, requestId);
}
