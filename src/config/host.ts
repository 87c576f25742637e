/**
 * Bind-address safety: the bridge holds a Cursor session, so anything other than loopback (and answering any `Host`
 * name) must require a local API key fit to guard it. Refusing at startup is better than serving a subscription to
 * the whole network, or to any web page.
 */
import { ProxyError } from "../util/errors.js";
import { isLoopbackHost } from "../util/loopback-host.js";

export { isLoopbackHost };

/** The shortest local API key accepted where the bridge is exposed: other machines, or any `Host` name, reach it. */
export const EXPOSED_API_KEY_MIN_LENGTH = 16;

/**
 * Refuses to serve where anyone but this machine's own programs could reach the bridge without a local API key fit
 * to guard it:
 * - a non-loopback `--host`: anyone who can reach the port;
 * - `--allowed-hosts *` (any `Host` name) even on loopback: a web page that points a name it controls at this machine
 *   (DNS rebinding) sends that name as `Host` and its own origin as `Origin`, both of which then pass, so only the
 *   key keeps it out.
 * There the key must have at least {@link EXPOSED_API_KEY_MIN_LENGTH} characters (anyone reaching the port can try
 * keys). Anywhere, a key that starts or ends with whitespace is refused: HTTP strips it from headers, so no client
 * could ever send it.
 * @throws ProxyError `invalid_request` naming the exposure and how to fix it.
 */
export function assertSafeBinding(config: {
  readonly host: string;
  readonly apiKey: string | undefined;
  readonly allowedHosts?: readonly string[] | undefined;
}): void {
  const key = config.apiKey;
  if (key !== undefined && key !== key.trim()) {
    throw new ProxyError(
      "invalid_request",
      "The API key (CURSOR_BRIDGE_API_KEY or --api-key) starts or ends with whitespace, which HTTP removes from " +
        "headers: no client could send it. Remove the spaces.",
      { param: "apiKey", detail: "invalid_config" },
    );
  }
  const anyHost = config.allowedHosts?.includes("*") === true;
  const exposure = isLoopbackHost(config.host)
    ? anyHost
      ? "answer any Host name (--allowed-hosts *)"
      : undefined
    : `listen on ${config.host}`;
  if (exposure === undefined) return;
  const why = anyHost
    ? "a web page that points a name it controls at this machine (DNS rebinding) could use your Cursor subscription"
    : "anyone who can reach it could use your Cursor subscription";
  if (key === undefined || key === "") {
    throw new ProxyError(
      "invalid_request",
      `Refusing to ${exposure} without an API key: ${why}. Set CURSOR_BRIDGE_API_KEY (or --api-key), or ` +
        (anyHost ? "list the names to answer in --allowed-hosts." : "listen on 127.0.0.1."),
      { param: anyHost ? "allowedHosts" : "host", detail: "unsafe_binding" },
    );
  }
  if (key.length < EXPOSED_API_KEY_MIN_LENGTH) {
    throw new ProxyError(
      "invalid_request",
      `Refusing to ${exposure} with an API key of ${key.length} characters: anyone who can reach the port can try ` +
        `keys. Use at least ${EXPOSED_API_KEY_MIN_LENGTH} (e.g. \`openssl rand -hex 16\`).`,
      { param: "apiKey", detail: "unsafe_binding" },
    );
  }
}
