/**
 * What every command needs, built once from the parsed flags: the resolved configuration (flags > env > file >
 * defaults, env taken from `io.env`), the credential store, the client version, the credentials to use and a
 * CursorApi on them. `serve` reuses it through {@link createCliContext}.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir as osHomedir } from "node:os";
import { join } from "node:path";
import type { CredentialStatus, RefreshingTokenSource } from "../auth/index.js";
import { type BridgeConfig, loadConfigFromSources } from "../config/index.js";
import { isCliVersion, resolveClientVersion } from "../protocol/cursor/client-version.js";
import { ClientVersionHealer } from "../protocol/cursor/client-version-heal.js";
import type { CursorApi, CursorApiOptions } from "../protocol/cursor/cursor-api.js";
import { createFileAccountStore } from "../stores/file/account-store.js";
import type { AccountStore, AuditLog, CredentialStore } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import { jwtExpiresAtMs, readJwtClaims, userIdFromSubject } from "../util/jwt.js";
import { cursorAgentVersionsDir, type PathEnvironment } from "../util/paths.js";
import type { TokenSource } from "../util/token-source.js";
import type { CliFlags } from "./args.js";
import { type CliIo, createStyle, type Style } from "./io.js";

/** Where the credentials in use come from; `parent` is the OpenCode plugin that started this process (parent-link.ts). */
export type CredentialOrigin = "store" | "env-access-token" | "env-api-key" | "parent";

/** Credentials ready for use. `status` is printable (no tokens). */
export interface ResolvedCredentials {
  origin: CredentialOrigin;
  tokenSource: TokenSource;
  /** For the store: its summary; for env credentials: what the token says (if it could be read). */
  status: CredentialStatus | undefined;
}

/** Shared state of one CLI invocation. */
export interface CliContext {
  readonly io: CliIo;
  readonly config: BridgeConfig;
  readonly json: boolean;
  readonly style: Style;
  readonly paths: PathEnvironment;
  /** The credentials of {@link account}. */
  readonly store: CredentialStore;
  /** The named Cursor account this context's `store` holds: the default account unless `--account` chose one. */
  readonly account: string;
  /** Every account's credentials (`<configDir>/credentials.json` and `<configDir>/accounts/`). */
  readonly accounts: AccountStore;
  /** Where logins and logouts are recorded (the team gateway's audit log), when one was passed in. */
  readonly audit: AuditLog | undefined;
  /**
   * The client version sent and where it came from; it heals itself when it is the default or a learned one
   * (protocol/cursor/client-version-heal.ts).
   */
  readonly clientVersion: ClientVersionHealer;
  now(): number;
  /** Human progress text: stdout normally, stderr under `--json` so stdout stays one JSON document. */
  info(text: string): void;
  /** Prints `value` as JSON on stdout. */
  printJson(value: unknown): void;
  /**
   * CURSOR_ACCESS_TOKEN, else the credential store, else CURSOR_API_KEY; undefined when none is available.
   * @throws ProxyError when the credential file is corrupt or foreign (the message names the path).
   */
  resolveCredentials(): Promise<ResolvedCredentials | undefined>;
  /** Like {@link resolveCredentials} but throws `unauthenticated` ("run cursor-bridge login") when there are none. */
  requireCredentials(): Promise<ResolvedCredentials>;
  /**
   * A CursorApi on the configured URLs, transport and client version whose unary calls refresh once and retry when
   * Cursor answers `unauthenticated` (§3.2). `extra` passes a logger or fetch through (serve). Asynchronous because
   * the protocol code (protobuf registries, Connect) loads on first use: commands that never call Cursor, and
   * `serve` until it has printed its listening line, do without it.
   */
  createCursorApi(tokenSource: TokenSource, extra?: Pick<CursorApiOptions, "logger" | "fetch">): Promise<CursorApi>;
  /**
   * The Cursor URL the default account's stored login was made against, when it recorded one (not Cursor's own),
   * and whether `config` uses it (it does unless --cursor-api-url, CURSOR_API_URL or the config file named a URL).
   */
  readonly loginUrl?: { recorded: string; used: boolean } | undefined;
  /**
   * The same context for another named account: its `store`, and credentials from that store alone (the
   * environment's credentials belong to the default account). @throws ProxyError `invalid_request` for a bad name.
   */
  forAccount(account: string): CliContext;
}

function homedirOf(env: CliIo["env"], platform: NodeJS.Platform): string {
  const fromEnv = platform === "win32" ? env.USERPROFILE : env.HOME;
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : osHomedir();
}

/** Where a client version learned from Cursor is kept: `<data dir>/client-version.json` (`{version, learnedAt}`). */
export function learnedVersionFile(config: BridgeConfig): string {
  return join(config.dataDir, "client-version.json");
}

function readLearnedVersion(config: BridgeConfig): string | undefined {
  try {
    const parsed = JSON.parse(readFileSync(learnedVersionFile(config), "utf8")) as { version?: unknown };
    return typeof parsed.version === "string" && isCliVersion(parsed.version) ? parsed.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CURSOR_CLIENT_VERSION also feeds config.clientVersion; report it as "env" rather than "config". A version learned
 * earlier comes from the data dir; CURSOR_BRIDGE_INSTALL_URL moves the install script (tests, mirrors).
 */
function clientVersionOf(config: BridgeConfig, paths: PathEnvironment): ClientVersionHealer {
  const fromEnv = paths.env.CURSOR_CLIENT_VERSION;
  const configured = config.clientVersion === fromEnv ? undefined : config.clientVersion;
  const initial = resolveClientVersion({
    ...(configured === undefined ? {} : { configured }),
    env: { CURSOR_CLIENT_VERSION: fromEnv },
    agentVersionsDir: cursorAgentVersionsDir(paths),
    learned: readLearnedVersion(config),
  });
  const installUrl = paths.env.CURSOR_BRIDGE_INSTALL_URL;
  return new ClientVersionHealer({
    initial,
    ...(installUrl === undefined || installUrl === "" ? {} : { installUrl }),
    persist: async (version) => {
      const [{ makeDir }, { writeFileAtomic }] = await Promise.all([
        import("../util/make-dir.js"),
        import("../stores/file/atomic-write.js"),
      ]);
      await makeDir(config.dataDir);
      const record = { version, learnedAt: new Date().toISOString() };
      await writeFileAtomic(learnedVersionFile(config), `${JSON.stringify(record, null, 2)}\n`);
    },
  });
}

/** Cursor's own API URL: the configured default, which a login does not record (auth/login.ts). */
export const DEFAULT_CURSOR_API_URL = "https://api2.cursor.sh";

/**
 * The config with the Cursor URL the stored login was made against, when the login recorded one and no URL was
 * configured (a login made against the emulator keeps working after a restart without CURSOR_API_URL). The agent URL
 * follows unless it was set on its own.
 */
async function withLoginUrl(
  config: BridgeConfig,
  env: CliIo["env"],
  flags: CliFlags,
  store: CredentialStore | undefined,
): Promise<{ config: BridgeConfig; loginUrl: CliContext["loginUrl"] }> {
  if (store === undefined || config.cursorAccessToken !== undefined) return { config, loginUrl: undefined };
  // Read as is, not through the store: loading tightens a loose file mode, which `doctor` must still see.
  const recorded = await readFile(store.location, "utf8")
    .then((text) => (JSON.parse(text) as { apiUrl?: unknown }).apiUrl)
    .catch(() => undefined);
  if (typeof recorded !== "string" || recorded === "") return { config, loginUrl: undefined };
  const given = (name: string, variable: string) =>
    flags.config[name] !== undefined || (env[variable] !== undefined && env[variable] !== "");
  const configured = given("cursorApiUrl", "CURSOR_API_URL") || config.cursorApiUrl !== DEFAULT_CURSOR_API_URL;
  if (configured) return { config, loginUrl: { recorded, used: recorded === config.cursorApiUrl } };
  const agentOwn = given("cursorAgentUrl", "CURSOR_AGENT_URL") || config.cursorAgentUrl !== config.cursorApiUrl;
  const next = { ...config, cursorApiUrl: recorded, cursorAgentUrl: agentOwn ? config.cursorAgentUrl : recorded };
  return { config: Object.freeze(next) as BridgeConfig, loginUrl: { recorded, used: true } };
}

/** A printable summary of a bare access token (env credentials). */
function statusOfToken(token: string, location: string, now: number): CredentialStatus {
  const claims = readJwtClaims(token);
  const status: CredentialStatus = { location, source: "env", hasApiKey: false, savedAt: "" };
  if (claims?.email !== undefined) status.email = claims.email;
  const userId = userIdFromSubject(claims?.sub);
  if (userId !== undefined) status.userId = userId;
  const expiresAt = jwtExpiresAtMs(token);
  if (expiresAt !== undefined) {
    status.expiresAt = new Date(expiresAt).toISOString();
    status.expired = expiresAt <= now;
  }
  return status;
}

/** CURSOR_API_KEY without a login: exchanged on first use into memory only, refreshed with the key afterwards. */
function apiKeyTokenSource(apiKey: string, apiUrl: string): TokenSource {
  let ready: Promise<RefreshingTokenSource> | undefined;
  const source = (signal?: AbortSignal): Promise<RefreshingTokenSource> => {
    ready ??= import("../auth/index.js")
      .then(async ({ createMemoryCredentialStore, createRefreshingTokenSource, loginWithApiKey }) => {
        const store = createMemoryCredentialStore();
        await loginWithApiKey(apiKey, { store, apiUrl, ...(signal === undefined ? {} : { signal }) });
        return createRefreshingTokenSource({ store, apiUrl });
      })
      .catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
    return ready;
  };
  return {
    // `then`, not an async arrow: this runs every turn, and an awaiting async function costs its own frame.
    getAccessToken: (signal) => source(signal).then((resolved) => resolved.getAccessToken(signal)),
    refreshAfterUnauthenticated: async (rejected, signal) =>
      (await source(signal)).refreshAfterUnauthenticated(rejected, signal),
  };
}

/** Wraps the unary calls with one refresh-and-retry after `unauthenticated` (refresh once on 401: a token can expire between two calls). */
function withRefreshRetry(api: CursorApi, tokenSource: TokenSource, lastToken: () => string | undefined): CursorApi {
  const retry = async <T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      const rejected = lastToken();
      if (ProxyError.from(error).code !== "unauthenticated" || rejected === undefined) throw error;
      await tokenSource.refreshAfterUnauthenticated(rejected, signal);
      return call();
    }
  };
  return {
    openRun: (first, options) => api.openRun(first, options),
    getUsableModels: (signal) => retry(() => api.getUsableModels(signal), signal),
    getDefaultModelForCli: (signal) => retry(() => api.getDefaultModelForCli(signal), signal),
    nameAgent: (message, signal) => retry(() => api.nameAgent(message, signal), signal),
    getCurrentPeriodUsage: (signal) => retry(() => api.getCurrentPeriodUsage(signal), signal),
    ...(api.availableModels === undefined
      ? {}
      : {
          availableModels: (signal?: AbortSignal) =>
            retry(() => api.availableModels?.(signal) ?? Promise.resolve([]), signal),
        }),
    ...(api.getServerConfig === undefined
      ? {}
      : {
          getServerConfig: (signal?: AbortSignal) =>
            retry(() => api.getServerConfig?.(signal) ?? Promise.reject(new Error("no GetServerConfig")), signal),
        }),
    close: () => api.close(),
  };
}

/** Options for tests and embedders. */
export interface CliContextOverrides {
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** @default Date.now */
  now?: () => number;
  /** Tokens from the plugin that started this process; wins over every other credential (plugin mode). */
  parentTokenSource?: TokenSource;
  /** The audit log logins and logouts are written to. @default none */
  audit?: AuditLog;
  /**
   * False for a new login: it goes to the configured URL (Cursor's unless one is set), not to the one the previous
   * login was made against. @default true
   */
  useLoginUrl?: boolean;
}

/**
 * Loads the configuration and builds the shared pieces of a command.
 * @throws ProxyError `invalid_request` for an invalid configuration (exit code 2).
 */
export async function createCliContext(
  io: CliIo,
  flags: CliFlags,
  overrides: CliContextOverrides = {},
): Promise<CliContext> {
  const platform = overrides.platform ?? process.platform;
  const now = overrides.now ?? Date.now;
  const paths: PathEnvironment = { env: io.env, platform, homedir: homedirOf(io.env, platform) };
  const loaded = await loadConfigFromSources({ env: io.env, flags: flags.config, platform, homedir: paths.homedir });
  const accounts = createFileAccountStore({ configDir: loaded.configDir, platform });
  const defaultAccount = await accounts.defaultAccount();
  const { config, loginUrl } = await withLoginUrl(
    loaded,
    io.env,
    flags,
    overrides.parentTokenSource === undefined && overrides.useLoginUrl !== false
      ? accounts.credentials(defaultAccount)
      : undefined,
  );
  const clientVersion = clientVersionOf(config, paths);

  const build = (account: string): CliContext => {
    const store = accounts.credentials(account);
    // CURSOR_ACCESS_TOKEN, CURSOR_API_KEY and the plugin's tokens stand for the default account only.
    const environment = account === defaultAccount;
    const resolveCredentials = async (): Promise<ResolvedCredentials | undefined> => {
      if (environment && overrides.parentTokenSource !== undefined) {
        return { origin: "parent", tokenSource: overrides.parentTokenSource, status: undefined };
      }
      if (environment && config.cursorAccessToken !== undefined) {
        const { createStaticTokenSource } = await import("../auth/token-source.js");
        const tokenSource = createStaticTokenSource(config.cursorAccessToken, { now });
        const status = statusOfToken(config.cursorAccessToken, "env CURSOR_ACCESS_TOKEN", now());
        return { origin: "env-access-token", tokenSource, status };
      }
      const stored = await store.load();
      if (stored !== undefined) {
        // The token code loads only when there are credentials to use (and the login code not at all).
        const [{ createRefreshingTokenSource }, { describeCredentials }, { withFileLock }] = await Promise.all([
          import("../auth/token-source.js"),
          import("../auth/credential-status.js"),
          import("../stores/file/file-lock.js"),
        ]);
        // One refresh at a time among every process using this credentials file (instances on one data dir).
        const tokenSource = createRefreshingTokenSource({
          store,
          apiUrl: config.cursorApiUrl,
          now,
          refreshLock: (work) => withFileLock(`${store.location}.lock`, work, { timeoutMs: 40_000, staleMs: 40_000 }),
        });
        return { origin: "store", tokenSource, status: describeCredentials(stored, store.location, now()) };
      }
      if (environment && config.cursorApiKey !== undefined) {
        return {
          origin: "env-api-key",
          tokenSource: apiKeyTokenSource(config.cursorApiKey, config.cursorApiUrl),
          status: undefined,
        };
      }
      return undefined;
    };
    const login = account === defaultAccount ? "cursor-bridge login" : `cursor-bridge login --account ${account}`;
    return {
      io,
      config,
      json: flags.json,
      style: createStyle(io.isTty && !flags.json && !io.env.NO_COLOR),
      paths,
      store,
      account,
      accounts,
      audit: overrides.audit,
      clientVersion,
      now,
      info: (text) => (flags.json ? io.err(text) : io.out(text)),
      printJson: (value) => io.out(`${JSON.stringify(value, null, 2)}\n`),
      resolveCredentials,
      async requireCredentials() {
        const credentials = await resolveCredentials();
        if (credentials !== undefined) return credentials;
        throw new ProxyError(
          "unauthenticated",
          `Not logged in (no credentials in ${store.location}). Run \`${login}\` first.`,
          { detail: "not_logged_in" },
        );
      },
      async createCursorApi(tokenSource, extra = {}) {
        const { createCursorApi } = await import("../protocol/cursor/cursor-api.js");
        let last: string | undefined;
        const api = createCursorApi({
          ...extra,
          agentUrl: config.cursorAgentUrl,
          apiUrl: config.cursorApiUrl,
          clientVersion: () => clientVersion.version,
          transport: config.transport,
          streamsPerConnection: config.upstreamStreamsPerConnection,
          getAccessToken: (signal) =>
            tokenSource.getAccessToken(signal).then((token) => {
              last = token;
              return token;
            }),
        });
        return withRefreshRetry(api, tokenSource, () => last);
      },
      loginUrl,
      forAccount: build,
    };
  };
  return build(defaultAccount);
}

/**
 * Resolves true when the credential file exists but is corrupt or foreign; the user is told so (the message names
 * the path) and that `consequence` will happen, so the caller may then pass `overwriteInvalid` (never silently).
 */
export async function announceInvalidCredentialFile(ctx: CliContext, consequence: string): Promise<boolean> {
  try {
    await ctx.store.load();
    return false;
  } catch (error) {
    const proxyError = ProxyError.from(error);
    if (proxyError.detail !== "invalid_credentials_file") throw error;
    ctx.io.err(`${ctx.style.yellow("Warning:")} ${proxyError.message}\n${consequence}\n`);
    return true;
  }
}
