/**
 * The emulator's accounts: token issuing, the browser-login handshake and the plain-HTTP auth routes of
 * docs/protocol.md §3 (`GET /auth/poll`, `POST /auth/exchange_user_api_key` for API keys only, `POST /oauth/token`
 * refreshing a browser login, a local `/loginDeepControl` page).
 * Tokens are HS256 JWTs with `exp` (jwt.ts), so login, refresh and expiry work end to end.
 */
import { createHash } from "node:crypto";
import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { base64UrlEncode } from "../util/jwt.js";
import type { Logger } from "../util/logger.js";
import type { JwtSigner, TokenIdentity } from "./jwt.js";

type NodeHandler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;
/** Node request of either HTTP version (connect-node's NodeServerRequest, which its index does not export). */
export type NodeRequest = Parameters<NodeHandler>[0];
/** Node response of either HTTP version (connect-node's NodeServerResponse). */
export type NodeResponse = Parameters<NodeHandler>[1];

/** Who a token or API key belongs to when the caller names nobody. */
export const DEFAULT_IDENTITY: TokenIdentity = { userId: "user_01EMULATOR0000000000000000", email: "dev@example.com" };
/** Refresh tokens live 60 days, like a long-lived session. */
const REFRESH_TTL_SECONDS = 60 * 24 * 3600;
const MAX_BODY_BYTES = 64 * 1024;

/** A token pair as the auth endpoints return it (§3.1 step 6, §3.2 variant A). */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

/** Why a bearer was refused. */
export type AuthFailure = "missing" | "malformed" | "invalid" | "expired";

/** Cursor's public OAuth client id (cursor-protocol-addendum-3.md X8): the only one `/oauth/token` accepts. */
export const OAUTH_CLIENT_ID = "KbZUR41cY7W6zRSdpSUJ7I7mLYBKOCmB";

/** Options of {@link createAuthority}. */
export interface AuthorityOptions {
  signer: JwtSigner;
  accessTokenTtlSeconds: number;
  logger: Logger;
  /** Counts the calls of the token routes (`GET /emulator/stats`). */
  onAuthCall?: (route: "exchange" | "oauth-token") => void;
}

interface PendingLogin {
  challenge?: string;
  approved?: TokenIdentity;
}

/** Who called the REST API: the key's or token's owner, and when the key was registered (ISO 8601). */
export interface RestCaller {
  identity: TokenIdentity;
  /** Set for an API key (the emulator names keys by the order they were added). */
  apiKeyName?: string;
  createdAt: string;
}

/** How `/oauth/token` refuses a revoked refresh token. */
export type RefreshRefusal = "shouldLogout" | "invalid_grant";

/** Account state of one emulator instance. */
export interface Authority {
  issueTokens(options?: { userId?: string; email?: string; expiresInSeconds?: number }): TokenPair;
  approveLogin(uuid: string, options?: { userId?: string; email?: string }): void;
  addApiKey(apiKey: string, options?: { userId?: string; email?: string }): void;
  /**
   * Ends a browser login: `/oauth/token` answers this refresh token with `shouldLogout: true` from now on, or with
   * `refusal: "invalid_grant"` OAuth's own refusal (400 `{error: "invalid_grant"}`, RFC 6749 §5.2), the other answer
   * Cursor may give to a refresh token it no longer honours (docs/protocol.md §9).
   */
  revokeRefreshToken(refreshToken: string, refusal?: RefreshRefusal): void;
  /** Checks an `authorization` header value for an RPC: only unexpired access (session) tokens pass. */
  authenticate(header: string | null): { ok: true; identity: TokenIdentity } | { ok: false; failure: AuthFailure };
  /**
   * Checks an `authorization` header of the REST API (`GET /v1/models`, `/v1/agents/{id}/usage`): the raw API key
   * (cursor-protocol-addendum-2.md §9), or an unexpired access token.
   */
  authenticateRest(header: string | null): RestCaller | undefined;
  /** Serves the auth routes; false when the path is not one of them. */
  handle(req: NodeRequest, res: NodeResponse): boolean;
}

function identityOf(options: { userId?: string; email?: string } | undefined): TokenIdentity {
  const userId = options?.userId ?? DEFAULT_IDENTITY.userId;
  const email = options?.email ?? (options?.userId === undefined ? DEFAULT_IDENTITY.email : undefined);
  return email === undefined ? { userId } : { userId, email };
}

/** `Bearer <token>` → token; null when missing, "" when malformed. */
function bearerOf(header: string | null | undefined): string | null {
  if (header === null || header === undefined || header === "") return null;
  const match = /^Bearer ([^\s]+)$/.exec(header);
  return match?.[1] ?? "";
}

/** Creates the account state and auth routes. */
export function createAuthority(options: AuthorityOptions): Authority {
  const { signer, accessTokenTtlSeconds, logger } = options;
  const pending = new Map<string, PendingLogin>();
  const apiKeys = new Map<string, TokenIdentity>();
  const keyCreated = new Map<string, string>();
  const started = new Date().toISOString();
  const revoked = new Map<string, RefreshRefusal>();

  const issue = (identity: TokenIdentity, ttl = accessTokenTtlSeconds): TokenPair => ({
    accessToken: signer.sign(identity, "session", ttl),
    refreshToken: signer.sign(identity, "refresh", Math.max(ttl, REFRESH_TTL_SECONDS)),
  });

  const poll = (url: URL, res: NodeResponse): void => {
    const uuid = url.searchParams.get("uuid");
    const verifier = url.searchParams.get("verifier");
    if (uuid === null || uuid === "" || verifier === null || verifier === "") {
      sendJson(res, 400, { error: "uuid and verifier are required" });
      return;
    }
    const login = pending.get(uuid);
    // §3.1 step 5: 404 means "still pending".
    if (login?.approved === undefined) {
      sendJson(res, 404, { error: "Not found" });
      return;
    }
    if (login.challenge !== undefined && challengeOf(verifier) !== login.challenge) {
      sendJson(res, 403, { error: "verifier does not match the login challenge" });
      return;
    }
    pending.delete(uuid);
    const tokens = issue(login.approved);
    const body: Record<string, string> = { ...tokens, authId: `auth0|${login.approved.userId}`, uuid };
    if (login.challenge !== undefined) body.challenge = login.challenge;
    sendJson(res, 200, body);
  };

  const exchange = (req: NodeRequest, res: NodeResponse): void => {
    options.onAuthCall?.("exchange");
    const token = bearerOf(req.headers.authorization);
    if (token === null || token === "") {
      sendJson(res, 401, { error: "Missing bearer API key" });
      return;
    }
    const keyOwner = apiKeys.get(token);
    if (keyOwner !== undefined) {
      sendJson(res, 200, issue(keyOwner));
      return;
    }
    // User API keys only: a browser login's access or refresh token is refused as the real endpoint refuses it
    // (cursor-protocol-addendum-3.md X8); those refresh through /oauth/token.
    sendJson(res, 401, { error: "Invalid User API Key" });
  };

  /**
   * `POST /oauth/token` with `{grant_type: "refresh_token", client_id, refresh_token}` (X8): a new access token and
   * `shouldLogout: false`; the refresh token does not rotate (the answer carries none). A revoked, expired or foreign
   * refresh token is answered `shouldLogout: true` (or 400 `invalid_grant` when revoked so); a malformed request 400.
   */
  const oauthToken = async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    options.onAuthCall?.("oauth-token");
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(await readBody(req));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      sendJson(res, 400, { error: "invalid_request", error_description: "The body must be a JSON object." });
      return;
    }
    if (body.grant_type !== "refresh_token" || typeof body.refresh_token !== "string" || body.refresh_token === "") {
      sendJson(res, 400, {
        error: "invalid_request",
        error_description: "grant_type refresh_token and refresh_token are required.",
      });
      return;
    }
    if (body.client_id !== OAUTH_CLIENT_ID) {
      sendJson(res, 401, { error: "invalid_client" });
      return;
    }
    if (revoked.get(body.refresh_token) === "invalid_grant") {
      sendJson(res, 400, { error: "invalid_grant", error_description: "The refresh token is invalid or revoked." });
      return;
    }
    const verified = signer.verify(body.refresh_token);
    if (!verified.ok || verified.claims.kind !== "refresh" || revoked.has(body.refresh_token)) {
      sendJson(res, 200, { access_token: "", id_token: "", shouldLogout: true });
      return;
    }
    const { userId, email } = verified.claims;
    const accessToken = issue(email === undefined ? { userId } : { userId, email }).accessToken;
    sendJson(res, 200, { access_token: accessToken, id_token: accessToken, shouldLogout: false });
  };

  const loginPage = (url: URL, res: NodeResponse): void => {
    const uuid = url.searchParams.get("uuid") ?? "";
    const challenge = url.searchParams.get("challenge") ?? "";
    if (uuid === "" || challenge === "") {
      sendHtml(res, 400, "<p>Missing uuid or challenge.</p>");
      return;
    }
    const current = pending.get(uuid);
    pending.set(uuid, { ...current, challenge });
    sendHtml(
      res,
      200,
      `<h1>cursor-bridge emulator login</h1><p>Approve the login request <code>${escapeHtml(uuid)}</code>?</p>` +
        `<form method="post" action="/loginDeepControl"><input type="hidden" name="uuid" value="${escapeHtml(uuid)}">` +
        `<input type="hidden" name="challenge" value="${escapeHtml(challenge)}"><button type="submit">Approve</button></form>`,
    );
  };

  const approveFromPage = async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    const form = new URLSearchParams(await readBody(req));
    const uuid = form.get("uuid") ?? "";
    const challenge = form.get("challenge") ?? "";
    if (uuid === "" || challenge === "") {
      sendHtml(res, 400, "<p>Missing uuid or challenge.</p>");
      return;
    }
    pending.set(uuid, { challenge, approved: identityOf(undefined) });
    sendHtml(res, 200, "<h1>Login approved</h1><p>You can close this tab and return to the terminal.</p>");
  };

  return {
    issueTokens(opts) {
      return issue(identityOf(opts), opts?.expiresInSeconds ?? accessTokenTtlSeconds);
    },
    approveLogin(uuid, opts) {
      const current = pending.get(uuid);
      pending.set(uuid, { ...current, approved: identityOf(opts) });
    },
    addApiKey(apiKey, opts) {
      apiKeys.set(apiKey, identityOf(opts));
      if (!keyCreated.has(apiKey)) keyCreated.set(apiKey, new Date().toISOString());
    },
    revokeRefreshToken(refreshToken, refusal = "shouldLogout") {
      revoked.set(refreshToken, refusal);
    },
    authenticateRest(header) {
      const token = bearerOf(header);
      if (token === null || token === "") return undefined;
      const keyOwner = apiKeys.get(token);
      if (keyOwner !== undefined) {
        const index = [...apiKeys.keys()].indexOf(token) + 1;
        return { identity: keyOwner, apiKeyName: `Emulator key ${index}`, createdAt: keyCreated.get(token) ?? started };
      }
      const verified = signer.verify(token);
      if (!verified.ok || verified.claims.kind !== "session") return undefined;
      const { userId, email } = verified.claims;
      return { identity: email === undefined ? { userId } : { userId, email }, createdAt: started };
    },
    authenticate(header) {
      const token = bearerOf(header);
      if (token === null) return { ok: false, failure: "missing" };
      if (token === "") return { ok: false, failure: "malformed" };
      const verified = signer.verify(token);
      if (!verified.ok) return { ok: false, failure: verified.reason };
      if (verified.claims.kind !== "session") return { ok: false, failure: "invalid" };
      const { userId, email } = verified.claims;
      return { ok: true, identity: email === undefined ? { userId } : { userId, email } };
    },
    handle(req, res) {
      const url = new URL(req.url ?? "/", "http://emulator.local");
      const route = `${req.method ?? "GET"} ${url.pathname}`;
      if (route === "GET /auth/poll") poll(url, res);
      else if (route === "POST /auth/exchange_user_api_key") exchange(req, res);
      else if (route === "POST /oauth/token") {
        oauthToken(req, res).catch((error: unknown) => {
          logger.warn("oauth token request failed", { error });
          if (!res.headersSent) sendJson(res, 400, { error: "invalid_request" });
        });
      } else if (route === "GET /loginDeepControl") loginPage(url, res);
      else if (route === "POST /loginDeepControl") {
        approveFromPage(req, res).catch((error: unknown) => {
          logger.warn("login approval failed", { error });
          if (!res.headersSent) sendHtml(res, 400, "<p>Bad request.</p>");
        });
      } else return false;
      return true;
    },
  };
}

/** base64url(SHA-256(verifier)), the PKCE S256 challenge (§3.1 step 2). */
export function challengeOf(verifier: string): string {
  return base64UrlEncode(new Uint8Array(createHash("sha256").update(verifier, "ascii").digest()));
}

function readBody(req: NodeRequest): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("request body too large"));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Writes a JSON response. */
export function sendJson(res: NodeResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendHtml(res: NodeResponse, status: number, body: string): void {
  const text = `<!doctype html><html><head><meta charset="utf-8"><title>cursor-bridge emulator</title></head><body>${body}</body></html>`;
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
