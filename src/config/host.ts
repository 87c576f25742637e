/**
 * Bind-address safety: the bridge holds a Cursor session, so anything other than loopback must require the local
 * API key. Refusing at startup is better than serving a subscription to the whole network.
 */
import { isIP } from "node:net";
import { ProxyError } from "../util/errors.js";

/** True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback (brackets allowed). */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (bare === "localhost" || bare.endsWith(".localhost")) return true;
  const mapped = bare.startsWith("::ffff:") ? bare.slice("::ffff:".length) : bare;
  if (isIP(mapped) === 4) return mapped.split(".")[0] === "127";
  if (isIP(bare) === 6) return /^(0{0,4}:){7}0{0,3}1$|^::1$/.test(bare);
  return false;
}

/**
 * Refuses to serve on a non-loopback host without an API key.
 * @throws ProxyError `invalid_request` naming the host and how to fix it.
 */
export function assertSafeBinding(config: { readonly host: string; readonly apiKey: string | undefined }): void {
  if (isLoopbackHost(config.host) || (config.apiKey !== undefined && config.apiKey !== "")) return;
  throw new ProxyError(
    "invalid_request",
    `Refusing to listen on ${config.host} without an API key: anyone who can reach it could use your Cursor ` +
      "subscription. Set CURSOR_BRIDGE_API_KEY (or --api-key), or listen on 127.0.0.1.",
    { param: "host", detail: "unsafe_binding" },
  );
}
