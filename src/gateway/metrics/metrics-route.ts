/**
 * `GET /metrics`: the Prometheus text exposition, served to the admin key (`Authorization: Bearer <admin key>`) or to
 * a client on the loopback interface (the socket's peer address, never a header). Anyone else gets an OpenAI-shaped
 * 401 (a wrong or missing admin key, when one is set) or 403 (no admin key set: loopback only).
 */
import type { Context, Handler } from "hono";
import type { AppEnv } from "../../surfaces/kit/access-log.js";
import { LOCAL_API_KEY_DETAIL } from "../../surfaces/kit/openai-error.js";
import { ProxyError } from "../../util/errors.js";
import { bearerToken } from "../../util/presented-key.js";
import { adminKeyDigest, isAdminKey } from "../admin/admin-key.js";
import { isLoopbackAddress, peerAddress } from "../peer-address.js";
import type { GatewayMetrics } from "./gateway-metrics.js";

/** Who may read the metrics besides loopback clients. */
export interface MetricsRouteOptions {
  /** The gateway's admin key setting (`--admin-key`: the key or `sha256:<hex>`); undefined = loopback clients only. */
  adminKey?: string | undefined;
}

/** Throws the 401/403 unless the request may read the metrics. */
function authorize(c: Context<AppEnv>, adminDigest: string | undefined): void {
  const presented = bearerToken(c.req.header("authorization"));
  if (adminDigest !== undefined && presented !== undefined) {
    if (isAdminKey(presented, adminDigest)) return;
    // The admin key's own 401 (the local-key detail keeps the Cursor login hint out of the message).
    throw new ProxyError("unauthenticated", "Invalid admin key for /metrics.", { detail: LOCAL_API_KEY_DETAIL });
  }
  if (isLoopbackAddress(peerAddress(c))) return;
  if (adminDigest !== undefined) {
    throw new ProxyError(
      "unauthenticated",
      "Missing admin key: /metrics is served to `Authorization: Bearer <admin key>` or to loopback clients.",
      { detail: LOCAL_API_KEY_DETAIL },
    );
  }
  throw new ProxyError(
    "permission_denied",
    "/metrics is served to loopback clients only; start cursor-bridge with --admin-key to scrape it from elsewhere.",
    { detail: "permission_denied" },
  );
}

/** The handler of `GET /metrics`. */
export function metricsHandler(metrics: GatewayMetrics, options: MetricsRouteOptions = {}): Handler<AppEnv> {
  const adminDigest = options.adminKey === undefined ? undefined : adminKeyDigest(options.adminKey);
  return async (c) => {
    authorize(c, adminDigest);
    const body = await metrics.exposition();
    return c.body(body, 200, { "content-type": metrics.contentType, "cache-control": "no-store" });
  };
}
