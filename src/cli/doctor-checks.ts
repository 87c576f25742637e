/**
 * The individual checks of `cursor-bridge doctor`. Each returns a printable result with a fix when something is
 * wrong; none throws, so one broken piece never hides the others.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { CLIENT_VERSION_SETTINGS, compareClientVersions } from "../protocol/cursor/client-version.js";
import { ProxyError } from "../util/errors.js";
import { redactText } from "../util/logger.js";
import type { CliContext, ResolvedCredentials } from "./context.js";
import { expiryText, identityOf, sourceLabel } from "./format.js";
import { describeProbe, type ProbeResult } from "./probe.js";
import { servingBridgeVersion } from "./runtime-file.js";

/** Outcome of one check; `info` is a fact that needs no fix (not logged in while the emulator serves). */
export type CheckStatus = "ok" | "info" | "warn" | "fail" | "skip";

/** One line of the doctor's report. */
export interface CheckResult {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warn or fail. */
  fix?: string;
}

/** The minimum Node.js major version (package.json engines). */
export const MIN_NODE_MAJOR = 20;

/** Node.js version against package.json `engines`. */
export function checkNodeVersion(version: string = process.versions.node): CheckResult {
  const major = Number(version.split(".")[0]);
  const base = { id: "node", title: "Node.js", detail: `v${version}` };
  if (major >= MIN_NODE_MAJOR) return { ...base, status: "ok" };
  return { ...base, status: "fail", fix: `Install Node.js ${MIN_NODE_MAJOR} or newer.` };
}

function modeOf(stats: { mode: number }): string {
  return (stats.mode & 0o777).toString(8).padStart(3, "0");
}

async function modeIfExists(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o777;
  } catch {
    return undefined;
  }
}

/** Permission problems of the stored file and its directory (POSIX); the store itself tightens the file on load. */
async function permissionProblem(
  ctx: CliContext,
  fileModeBefore: number | undefined,
): Promise<CheckResult | undefined> {
  const base = { id: "credentials", title: "Credentials", status: "warn" as const };
  const dir = dirname(ctx.store.location);
  const dirMode = await modeIfExists(dir);
  if (fileModeBefore !== undefined && (fileModeBefore & 0o077) !== 0) {
    const detail = `${ctx.store.location} was mode ${modeOf({ mode: fileModeBefore })}, readable by others (now 600)`;
    const fix = "Others may have read it: run `cursor-bridge logout`, then `cursor-bridge login`.";
    return { ...base, detail, fix };
  }
  if (dirMode !== undefined && (dirMode & 0o077) !== 0) {
    return { ...base, detail: `${dir} is mode ${modeOf({ mode: dirMode })}`, fix: `chmod 700 ${dir}` };
  }
  return undefined;
}

/** Credentials present, readable, and stored with private permissions. */
export async function checkCredentials(
  ctx: CliContext,
): Promise<{ result: CheckResult; credentials: ResolvedCredentials | undefined }> {
  const base = { id: "credentials", title: "Credentials" };
  const fileModeBefore = await modeIfExists(ctx.store.location);
  let credentials: ResolvedCredentials | undefined;
  try {
    credentials = await ctx.resolveCredentials();
  } catch (error) {
    const message = redactText(ProxyError.from(error).message);
    const fix = "Run `cursor-bridge login` (it replaces the file after telling you) or move the file away.";
    return { result: { ...base, status: "fail", detail: message, fix }, credentials: undefined };
  }
  if (credentials === undefined) {
    const fix = "Run `cursor-bridge login`, or `cursor-bridge import` to reuse the Cursor CLI/IDE login.";
    if (ctx.config.upstream === "auto") {
      // `serve` then answers with the built-in emulator: a working setup, not a failure.
      const detail =
        `not logged in (no ${ctx.store.location}): \`cursor-bridge serve\` answers with the built-in emulator; ` +
        "run `cursor-bridge login` (or `cursor-bridge import`) to use your Cursor account";
      return { result: { ...base, status: "info", detail, fix }, credentials };
    }
    const detail = `not logged in (no ${ctx.store.location})`;
    return { result: { ...base, status: "fail", detail, fix }, credentials };
  }
  if (credentials.origin !== "store" || credentials.status === undefined) {
    const variable = credentials.origin === "env-api-key" ? "CURSOR_API_KEY" : "CURSOR_ACCESS_TOKEN";
    return { result: { ...base, status: "ok", detail: `from the environment (${variable})` }, credentials };
  }
  const madeAgainst = ctx.loginUrl?.used === true ? `, made against ${ctx.loginUrl.recorded}` : "";
  const detail = `${identityOf(credentials.status)}, ${sourceLabel(credentials.status.source)}${madeAgainst} (${ctx.store.location})`;
  if (ctx.paths.platform === "win32") return { result: { ...base, status: "ok", detail }, credentials };
  const problem = await permissionProblem(ctx, fileModeBefore);
  return { result: problem ?? { ...base, status: "ok", detail: `${detail}, mode 600` }, credentials };
}

/**
 * A stored login made against another Cursor URL than the one configured (an emulator's login while CURSOR_API_URL
 * names Cursor, or the other way round): its tokens mean nothing there. Undefined when they agree.
 */
export function checkLoginUrl(ctx: CliContext): CheckResult | undefined {
  const loginUrl = ctx.loginUrl;
  if (loginUrl === undefined || loginUrl.used) return undefined;
  return {
    id: "login-url",
    title: "Login URL",
    status: "fail",
    detail: `the login was made against ${loginUrl.recorded}, but the configured Cursor URL is ${ctx.config.cursorApiUrl}`,
    fix:
      `Unset CURSOR_API_URL (and --cursor-api-url, cursorApiUrl in config.json) to use ${loginUrl.recorded}, or ` +
      "run `cursor-bridge login` again against the configured URL.",
  };
}

/** The token's expiry, and whether Cursor accepts it (one authenticated GetUsableModels call, refreshing if due). */
export async function checkToken(ctx: CliContext, credentials: ResolvedCredentials | undefined): Promise<CheckResult> {
  const base = { id: "token", title: "Token" };
  if (credentials === undefined) return { ...base, status: "skip", detail: "no credentials" };
  const expiry =
    credentials.status === undefined ? "exchanged from the API key" : expiryText(credentials.status, ctx.now());
  const api = await ctx.createCursorApi(credentials.tokenSource);
  try {
    const models = await api.getUsableModels(AbortSignal.timeout(15_000));
    return { ...base, status: "ok", detail: `${expiry}; accepted by Cursor (${models.length} models)` };
  } catch (error) {
    const proxyError = ProxyError.from(error);
    const detail = `${expiry}; ${redactText(proxyError.message)}`;
    if (proxyError.code === "unauthenticated") {
      return { ...base, status: "fail", detail, fix: "Run `cursor-bridge login` again." };
    }
    return { ...base, status: "warn", detail, fix: "See the upstream checks below." };
  } finally {
    api.close();
  }
}

/** One reachability probe; a failure is fatal only for the transport the bridge must use. */
export function checkProbe(ctx: CliContext, probe: ProbeResult, other: ProbeResult): CheckResult {
  const label = probe.protocol === "http2" ? "HTTP/2" : "HTTP/1.1";
  const base = { id: `upstream-${probe.protocol}`, title: `Upstream ${label}` };
  const detail = `${ctx.config.cursorApiUrl} ${describeProbe(probe)}`;
  if (probe.reachable) return { ...base, status: "ok", detail };
  const transport = ctx.config.transport;
  const required = transport === probe.protocol || (transport === "auto" && !other.reachable);
  const fix =
    transport === "auto" && other.reachable
      ? `The bridge falls back to ${other.protocol === "http2" ? "HTTP/2" : "HTTP/1.1"}; nothing to do unless that fails too.`
      : "Check your network, proxy or firewall, and --cursor-api-url / CURSOR_API_URL.";
  if (transport !== "auto" && transport !== probe.protocol) return { ...base, status: "skip", detail };
  return { ...base, status: required ? "fail" : "warn", detail, fix };
}

/** The nearest ancestor of `path` that exists (for "will be created" checks). */
async function nearestExisting(path: string): Promise<string> {
  let current = path;
  for (;;) {
    try {
      await stat(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

/** A directory cursor-bridge writes to: writable, and private (0700) on POSIX. */
export async function checkDirectory(ctx: CliContext, id: string, title: string, dir: string): Promise<CheckResult> {
  const base = { id, title };
  let stats: Awaited<ReturnType<typeof stat>>;
  try {
    stats = await stat(dir);
  } catch {
    const parent = await nearestExisting(dir);
    try {
      await access(parent, constants.W_OK);
      return { ...base, status: "ok", detail: `${dir} (created on first use)` };
    } catch {
      return { ...base, status: "fail", detail: `${dir} cannot be created`, fix: `mkdir -p -m 700 ${dir}` };
    }
  }
  if (!stats.isDirectory())
    return { ...base, status: "fail", detail: `${dir} is not a directory`, fix: `Move ${dir} away.` };
  try {
    await access(dir, constants.R_OK | constants.W_OK);
  } catch {
    return {
      ...base,
      status: "fail",
      detail: `${dir} is not writable`,
      fix: `chown "$USER" ${dir} && chmod 700 ${dir}`,
    };
  }
  const mode = modeOf(stats);
  if (ctx.paths.platform !== "win32" && (stats.mode & 0o077) !== 0) {
    return { ...base, status: "warn", detail: `${dir} (mode ${mode}, readable by others)`, fix: `chmod 700 ${dir}` };
  }
  return { ...base, status: "ok", detail: ctx.paths.platform === "win32" ? dir : `${dir} (mode ${mode})` };
}

/** Where `doctor` looks for the server: the address given, or the one a running `serve` recorded. */
export interface PortTarget {
  host: string;
  port: number;
  /** True when --port / CURSOR_BRIDGE_PORT named the port (the hint then repeats it). */
  explicit: boolean;
  /** Set when the address came from a running server's runtime file. */
  recorded?: boolean;
}

function serveHint(target: PortTarget): string {
  return target.explicit ? `\`cursor-bridge serve --port ${target.port}\`` : "`cursor-bridge serve`";
}

/**
 * Whether a cursor-bridge serves host:port, and otherwise whether `serve` could listen there: nothing running is a
 * warning that says how to start it; a port held by another program is a failure.
 */
export function checkPort(target: PortTarget): Promise<CheckResult> {
  const { host, port } = target;
  const base = { id: "port", title: "Port" };
  if (port === 0) return Promise.resolve({ ...base, status: "skip", detail: "port 0: any free port is used" });
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", async (error: NodeJS.ErrnoException) => {
      const inUse = error.code === "EADDRINUSE";
      const version = inUse ? await servingBridgeVersion(host, port) : undefined;
      if (version !== undefined) {
        const how = target.recorded === true ? " (found through its runtime file)" : "";
        resolve({ ...base, status: "ok", detail: `${host}:${port} is served by cursor-bridge ${version}${how}` });
        return;
      }
      resolve({
        ...base,
        status: "fail",
        detail: `${host}:${port} ${inUse ? "is in use by another program" : `cannot be bound (${error.code ?? "error"})`}`,
        fix: inUse
          ? "Stop the other program or pick another port with --port."
          : "Pick another port with --port or another interface with --host.",
      });
    });
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() =>
        resolve({
          ...base,
          status: "warn",
          detail: `no cursor-bridge is running on ${host}:${port} (the port is free)`,
          fix: `no cursor-bridge is running; start it with ${serveHint(target)}`,
        }),
      );
    });
  });
}

/**
 * The client version that will be sent, where it came from (a built-in default may age; §8; `learned` = from
 * Cursor's install script, kept in the data dir), and Cursor's minimum when it was asked (GetServerConfig): below
 * it a default or learned version heals itself, a chosen one must be changed.
 */
export async function checkClientVersion(
  ctx: CliContext,
  credentials: ResolvedCredentials | undefined,
): Promise<CheckResult> {
  let minimum: string | undefined;
  if (credentials !== undefined) {
    const api = await ctx.createCursorApi(credentials.tokenSource).catch(() => undefined);
    try {
      const { policyOf } = await import("../protocol/cursor/client-version-policy.js");
      const config = await api?.getServerConfig?.(AbortSignal.timeout(10_000));
      const policy = config === undefined ? undefined : policyOf(config);
      if (policy !== undefined) await ctx.clientVersion.check(async () => policy);
      minimum = policy?.minSupported || undefined;
    } catch {
      minimum = undefined;
    } finally {
      api?.close();
    }
  }
  const { version, source } = ctx.clientVersion;
  const origin = source === "default" ? "built-in default" : source === "learned" ? "learned from Cursor" : source;
  const floor = minimum === undefined ? "" : `; Cursor's minimum ${minimum}`;
  const below = minimum !== undefined && compareClientVersions(version, minimum) < 0;
  return {
    id: "client-version",
    title: "Client version",
    status: below ? "warn" : "ok",
    detail: `${version} (${origin})${floor}`,
    ...(below
      ? { fix: `Cursor refuses versions below ${minimum}: set ${CLIENT_VERSION_SETTINGS} to a newer one` }
      : {}),
  };
}
