/**
 * The status page: `GET /` (one self-contained HTML page, no external assets) and `GET /status.json` (what it
 * renders, fetched again every few seconds). Both sit behind the app's Host and Origin guards like the API. With a
 * local API key they need it too: as `Authorization: Bearer`/`x-api-key`, or as the password of HTTP Basic auth,
 * which is what a browser can send (it asks once, then sends it with the page's own requests). Nothing secret is
 * shown: no tokens, no keys, no request bodies. Once virtual keys exist (the team gateway), both need the admin key
 * (or the local API key) as `Authorization: Bearer`: /status.json answers 401 without it, and the page itself
 * carries no data then, only a sign-in where the admin types the key once (kept in the tab's sessionStorage, sent
 * as a header by the page's own requests, never in a URL or a cookie). A request the admin check accepts also gets
 * each key's usage this period: requests, tokens, spend against budget, reset.
 */
import { randomBytes } from "node:crypto";
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { BridgeEngine } from "../engine/index.js";
import type { AppEnv } from "../surfaces/kit/access-log.js";
import type { AppOptions, StatusSources } from "../surfaces/kit/deps.js";
import { LOCAL_API_KEY_DETAIL, toOpenAIError } from "../surfaces/kit/openai-error.js";
import type { RecentRequests } from "../surfaces/kit/recent-requests.js";
import { ProxyError } from "../util/errors.js";
import { clampForMessage } from "../util/logger.js";
import { apiKeyMatches, presentedKey } from "./api-key.js";
import { statusPageHtml } from "./status-html.js";
import type { StatusSnapshot, UsageSnapshot } from "./status-snapshot.js";

export type { StatusSnapshot } from "./status-snapshot.js";

/** How long a plan usage answer is reused (the page refreshes every few seconds; Cursor need not be asked each time). */
const USAGE_TTL_MS = 60_000;
const USAGE_TIMEOUT_MS = 5_000;
const MODELS_TIMEOUT_MS = 5_000;

/** What {@link registerStatusRoutes} needs. */
export interface StatusDeps {
  engine: BridgeEngine;
  options: AppOptions;
  status?: StatusSources | undefined;
  recent: RecentRequests;
  now: () => number;
}

function messageOf(error: unknown): string {
  return clampForMessage(error instanceof Error ? error.message : String(error), 200);
}

/** The URL without a user name or password in it (never shown), or null. */
function withoutCredentials(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.href.replace(/\/$/, "");
  } catch {
    return null;
  }
}

/** Who is logged in now, from a value or a function of it (a failed read shows none). */
async function loginNow(who: StatusSources["account"]): Promise<string | undefined> {
  return typeof who === "function" ? who().catch(() => undefined) : who;
}

/**
 * Reuses a usage answer (or failure) for {@link USAGE_TTL_MS}, for one login: another login (a new `login` while the
 * server runs) is asked again.
 */
function usageCache(sources: Pick<StatusSources, "usage"> | undefined, now: () => number) {
  let cached: { at: number; who: string | undefined; value: UsageSnapshot } | undefined;
  return async (who: string | undefined): Promise<UsageSnapshot> => {
    if (cached !== undefined && cached.who === who && now() - cached.at < USAGE_TTL_MS) return cached.value;
    let value: UsageSnapshot;
    if (sources?.usage === undefined) value = { available: false, reason: "not reported by this upstream" };
    else {
      try {
        const usage = await sources.usage(AbortSignal.timeout(USAGE_TIMEOUT_MS));
        value = usage === undefined ? { available: false, reason: "not reported" } : { available: true, ...usage };
      } catch (error) {
        value = { available: false, reason: messageOf(error) };
      }
    }
    cached = { at: now(), who, value };
    return value;
  };
}

/** The per-key usage table, for the admin only (and only when virtual keys are in use). */
async function keyTable(
  sources: StatusSources | undefined,
  request: Request,
): Promise<Pick<StatusSnapshot, "keys" | "keysError">> {
  const keys = sources?.keys;
  if (keys === undefined || !keys.isAdmin(request)) return {};
  try {
    return { keys: await keys.usage.keyUsage() };
  } catch (error) {
    return { keys: [], keysError: messageOf(error) };
  }
}

/** Whether the request carries the local API key (Bearer, x-api-key, or the Basic-auth password). */
function hasApiKey(c: Context<AppEnv>, apiKey: string): boolean {
  const authorization = c.req.header("authorization");
  const basic = authorization?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i)?.[1];
  let key = presentedKey(authorization, c.req.header("x-api-key"));
  if (basic !== undefined) {
    const decoded = Buffer.from(basic, "base64").toString("utf8");
    key = decoded.slice(decoded.indexOf(":") + 1);
  }
  return key !== undefined && apiKeyMatches(key, apiKey);
}

/** Whether virtual keys exist (then the page is the admin's). */
const keysInUse = (sources: StatusSources | undefined) => sources?.keys?.inUse?.() === true;

/** Whether the request may read the status: the admin key or the API key while keys exist, else the API key if set. */
function mayRead(c: Context<AppEnv>, apiKey: string | undefined, sources: StatusSources | undefined): boolean {
  if (apiKey !== undefined && hasApiKey(c, apiKey)) return true;
  if (keysInUse(sources)) return sources?.keys?.isAdmin(c.req.raw) === true;
  return apiKey === undefined;
}

/** /status.json while virtual keys exist, without the admin key: 401, no browser prompt (the page signs in). */
function adminKeyNeeded(c: Context<AppEnv>): Response {
  const error = new ProxyError(
    "unauthenticated",
    "This cursor-bridge gives each person a key, and its status is for the admin: sign in on the status page (/) " +
      "with the admin key, or send it as `Authorization: Bearer <admin key>`.",
    { detail: LOCAL_API_KEY_DETAIL },
  );
  const { status, headers, body } = toOpenAIError(error, { requestId: c.get("log")?.requestId });
  return c.json(body, status as 401, { ...headers, "cache-control": "no-store" });
}

/** Requires the local API key (Bearer, x-api-key, or the Basic-auth password) when one is configured. */
function requireKeyForPage(apiKey: string | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (apiKey === undefined) return next();
    if (hasApiKey(c, apiKey)) return next();
    const error = new ProxyError(
      "unauthenticated",
      "This cursor-bridge has a local API key: send it as `Authorization: Bearer <key>`, or enter it as the " +
        "password (any user name) when the browser asks.",
      { detail: LOCAL_API_KEY_DETAIL },
    );
    const { status, headers, body } = toOpenAIError(error, { requestId: c.get("log")?.requestId });
    return c.json(body, status as 401, {
      ...headers,
      // Makes a browser ask for the key; what it then sends is the Basic credential read above.
      "www-authenticate": 'Basic realm="cursor-bridge status", charset="UTF-8"',
      "cache-control": "no-store",
    });
  };
}

/** Mounts `GET /` and `GET /status.json` (before the /v1 middleware; the Host and Origin guards already ran). */
export function registerStatusRoutes(app: Hono<AppEnv>, deps: StatusDeps): void {
  const usage = usageCache(deps.status, deps.now);
  // Each account's usage is asked with its own tokens, cached like the default's.
  const accounts = (deps.status?.accounts ?? []).map((account) => ({
    account,
    usage: usageCache(account, deps.now),
  }));
  const snapshot = async (request: Request): Promise<StatusSnapshot> => {
    let models: StatusSnapshot["models"] = [];
    let modelsError: string | null = null;
    try {
      const listed = await deps.engine.listModels(AbortSignal.timeout(MODELS_TIMEOUT_MS));
      models = listed.map((model) => ({
        id: model.id,
        name: model.displayName,
        reasoning: model.reasoning,
        vision: model.vision,
        maxMode: model.maxMode,
      }));
    } catch (error) {
      modelsError = messageOf(error);
    }
    const now = deps.now();
    const account = await loginNow(deps.status?.account);
    return {
      version: deps.options.version,
      now,
      upstream: {
        kind: deps.options.upstream,
        url: withoutCredentials(deps.status?.upstreamUrl),
        loggedIn: deps.options.loggedIn,
        account: account ?? null,
      },
      usage: await usage(account),
      accounts: await Promise.all(
        accounts.map(async ({ account, usage: accountUsage }) => {
          const who = await loginNow(account.who);
          return { name: account.name, default: account.default, who: who ?? null, usage: await accountUsage(who) };
        }),
      ),
      models,
      modelsError,
      parked: (deps.engine.parkedTurns?.() ?? []).map((entry) => ({
        model: clampForMessage(entry.model, 80),
        ageMs: Math.max(0, now - entry.parkedAt),
        pendingToolCalls: entry.pendingToolCalls,
      })),
      requests: deps.recent.list(),
      ...(await keyTable(deps.status, request)),
    };
  };
  const apiKey = deps.options.apiKey;
  const pageGuard = requireKeyForPage(apiKey);
  const noStore = { "cache-control": "no-store", "x-content-type-options": "nosniff" };

  app.get("/status.json", async (c) => {
    if (keysInUse(deps.status)) {
      if (!mayRead(c, apiKey, deps.status)) return adminKeyNeeded(c);
    } else {
      const refused = await pageGuard(c, async () => undefined);
      if (refused instanceof Response) return refused;
    }
    return c.json(await snapshot(c.req.raw), 200, noStore);
  });
  app.get("/", async (c: Context<AppEnv>) => {
    // While keys exist, a request without the admin key gets the page without data: its sign-in asks for the key.
    const signIn = keysInUse(deps.status) && !mayRead(c, apiKey, deps.status);
    if (!keysInUse(deps.status)) {
      const refused = await pageGuard(c, async () => undefined);
      if (refused instanceof Response) return refused;
    }
    const nonce = randomBytes(16).toString("base64");
    const html = statusPageHtml(signIn ? null : await snapshot(c.req.raw), nonce, deps.options.version);
    return c.html(html, 200, {
      ...noStore,
      "content-security-policy":
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; ` +
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
    });
  });
}
