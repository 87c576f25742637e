/**
 * Keeps web pages from using the local server. A page the user visits can send requests to 127.0.0.1 (a "simple"
 * `text/plain` POST needs no CORS preflight) and, through DNS rebinding, read the answers under its own host name.
 * Three checks close that:
 *
 * - Host: only loopback names/addresses, the address the server is bound to and configured `allowedHosts` are
 *   served (DNS rebinding arrives with the attacker's host name).
 * - Origin: a browser request (it carries `Origin`, or `Sec-Fetch-Site` saying another site sent it) is served only
 *   when it comes from the server's own origin or a configured allowed origin.
 * - Content type: JSON endpoints require `application/json`, which a page can only send after a CORS preflight.
 *
 * The same guard refuses a compressed body (`Content-Encoding` other than `identity`) with a 415 before it is read:
 * read as it came it would only fail as JSON that does not parse.
 */
import type { MiddlewareHandler } from "hono";
import { ProxyError } from "../util/errors.js";
import { clampForMessage } from "../util/logger.js";
import { hostnameOf, isLoopbackHost } from "../util/loopback-host.js";

/** Options of the guards (already validated by config/). */
export interface GuardOptions {
  /** Host names (no port) served besides loopback; `*` serves any host. */
  allowedHosts: readonly string[];
  /** Browser origins (`scheme://host[:port]`) served besides the server's own. */
  allowedOrigins: readonly string[];
}

export { hostnameOf };

/** True when the `Host` value names this server: loopback, or an allowed host. */
export function hostAllowed(host: string, allowedHosts: readonly string[]): boolean {
  const name = hostnameOf(host);
  // An empty Host names nothing, not even under `*` (HTTP/1.1 requires one; a client that sends it empty is broken).
  if (name === "") return false;
  if (allowedHosts.includes("*")) return true;
  return isLoopbackHost(name) || allowedHosts.some((allowed) => hostnameOf(allowed) === name);
}

function normalizeOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, "");
}

/** Rejects requests for a host name this server does not answer to (DNS rebinding). */
export function guardHost(options: GuardOptions): MiddlewareHandler {
  // The last Host value found allowed: a client sends the same one on every request, and judging it again (a few
  // regular expressions, about 20 µs of a request under load) gives the same answer for the same options.
  let lastAllowed: string | undefined;
  // Not async, like every guard that does nothing after its `next()`: the request's promise chain then has no frame
  // of its own to resume on the way back (the first token waits for that way back).
  return (c, next) => {
    // Over a socket the adapter builds the URL from the Host header; app.request() has no Host header.
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (host === lastAllowed) return next();
    if (hostnameOf(host) === "") {
      throw new ProxyError(
        "invalid_request",
        "The Host header is empty; send the host name the server is reached at.",
        {
          detail: "bad_request",
          param: "host",
        },
      );
    }
    if (!hostAllowed(host, options.allowedHosts)) {
      const name = clampForMessage(hostnameOf(host), 100);
      throw new ProxyError(
        "permission_denied",
        `Host \`${name}\` is not allowed. cursor-bridge answers loopback names (localhost, 127.0.0.1, ::1) only; ` +
          `to serve this name, start it with --allowed-hosts ${name} (or CURSOR_BRIDGE_ALLOWED_HOSTS).`,
        { detail: "host_not_allowed", status: 403 },
      );
    }
    lastAllowed = host;
    return next();
  };
}

/** Rejects browser requests from origins other than the server's own and the configured ones. */
export function guardOrigin(options: GuardOptions): MiddlewareHandler {
  const allowed = new Set(options.allowedOrigins.map(normalizeOrigin));
  return (c, next) => {
    const origin = c.req.header("origin");
    if (origin === undefined) {
      // No Origin: not a browser's CORS or POST request. A browser's no-cors GET (an <img> or <script> tag) still
      // says where it came from in Sec-Fetch-Site.
      const site = c.req.header("sec-fetch-site");
      if (site === undefined || site === "same-origin" || site === "none") return next();
      throw originError("(not sent)");
    }
    const normalized = normalizeOrigin(origin);
    const url = new URL(c.req.url);
    const own = `${url.protocol}//${c.req.header("host") ?? url.host}`.toLowerCase();
    if (normalized === own || allowed.has(normalized)) return next();
    throw originError(clampForMessage(origin, 200));
  };
}

function originError(origin: string): ProxyError {
  return new ProxyError(
    "permission_denied",
    `Browser requests from origin \`${origin}\` are not allowed. To let a web app use cursor-bridge, start it with ` +
      "--allowed-origins <origin> (or CURSOR_BRIDGE_ALLOWED_ORIGINS).",
    { detail: "origin_not_allowed", status: 403 },
  );
}

/** True for `application/json` and `application/<x>+json`, with any parameters. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** The `Content-Encoding` of a body that is not sent as is, or undefined (none, empty or `identity`). */
export function bodyEncoding(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const codings = header
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  return codings.length === 0 ? undefined : codings.join(", ");
}

/** Requires an uncompressed body with a JSON content type on requests with a body (POST, PUT, PATCH). */
export function requireJson(): MiddlewareHandler {
  return (c, next) => {
    const method = c.req.method;
    if (method !== "POST" && method !== "PUT" && method !== "PATCH") return next();
    const contentType = c.req.header("content-type");
    if (!isJsonMediaType(contentType)) {
      throw new ProxyError(
        "unsupported_media_type",
        `This endpoint takes a JSON body: send \`Content-Type: application/json\` (got ${
          contentType === undefined ? "none" : `\`${clampForMessage(contentType, 100)}\``
        }).`,
        { detail: "not_json", param: "content-type" },
      );
    }
    const encoding = bodyEncoding(c.req.header("content-encoding"));
    if (encoding !== undefined) {
      throw new ProxyError(
        "unsupported_media_type",
        `Content-Encoding ${clampForMessage(encoding, 100)} is not supported; send the body uncompressed.`,
        { detail: "encoded_body", param: "content-encoding" },
      );
    }
    return next();
  };
}
