/**
 * Host names as a local server judges them: what a `Host` header (or HTTP/2 `:authority`) names without its port,
 * and whether that is this machine's loopback. Shared by the bridge's request guard, its bind check and the
 * embedded emulator, which answer loopback names only (a web page that points a name of its own at 127.0.0.1, DNS
 * rebinding, sends that name).
 */
import { isIP } from "node:net";

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

/** `example.com:8765` → `example.com`; `[::1]:8765` → `::1`; lower-cased. */
export function hostnameOf(host: string): string {
  const trimmed = host.trim().toLowerCase();
  const bracketed = trimmed.match(/^\[([^\]]*)\](?::\d*)?$/);
  if (bracketed) return bracketed[1] ?? "";
  // A bare IPv6 address has several colons and no port.
  if ((trimmed.match(/:/g) ?? []).length > 1) return trimmed;
  return trimmed.replace(/:\d*$/, "");
}
