/**
 * Chooses and builds the upstream the server talks to: the real Cursor service when credentials exist (or
 * `--upstream cursor`), otherwise the embedded emulator, started in-process on a free loopback port.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { BridgeConfig } from "../config/index.js";
import type { Emulator } from "../emulator/index.js";
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import type { CredentialStore } from "../stores/types.js";
import type { UpstreamKind } from "../surfaces/kit/deps.js";
import { ProxyError } from "../util/errors.js";
import { readJwtClaims } from "../util/jwt.js";
import type { Logger } from "../util/logger.js";
import type { ReservedListener } from "../util/reserved-listener.js";
import type { TokenSource } from "../util/token-source.js";
import type { CliContext, ResolvedCredentials } from "./context.js";
import { loginOf } from "./format.js";
import { chooseUpstream, type UpstreamChoice } from "./upstream-choice.js";

/** The upstream a server runs against. */
export interface Upstream {
  kind: UpstreamKind;
  /** Cursor credentials are present (whether or not they are used). */
  loggedIn: boolean;
  /** Who is logged in, for the banner (email or user id), when known. */
  account: string | undefined;
  agentUrl: string;
  api: CursorApi;
  /** The tokens `api` runs on (refreshed once after `unauthenticated`). */
  tokenSource: TokenSource;
  /** Where this upstream's conversations live (the emulator's apart from real ones). */
  dataDir: string;
  /** The embedded emulator when kind is "emulator". */
  emulator: Emulator | undefined;
  /** The default account's name (named accounts, issue #29). */
  defaultAccount: string;
  /** The other named accounts served beside the default one, each on its own tokens and API; empty for one login. */
  named: ReadonlyArray<{ name: string; who: string | undefined; api: CursorApi; tokenSource: TokenSource }>;
  close(): Promise<void>;
}

/**
 * Whether the login this server started with is still stored: `logout` (or deleting credentials.json) while it runs
 * turns `/health`'s `logged_in` false and is logged once, with what to do. The token source reads the stored login
 * whenever it needs a token, so requests fail with "not logged in" from the next one on, and a new `login` (or
 * `import`) is used from the next request on, without a restart. Credentials from the environment or from a parent
 * process are not in the file and stay logged in. The check is a stat, at most once a second.
 */
export function storedLoginWatch(ctx: CliContext, credentials: { origin: string }, logger: Logger): () => boolean {
  if (credentials.origin !== "store" || ctx.config.store !== "file") return () => true;
  let present = true;
  let checkedAt = 0;
  return () => {
    const now = Date.now();
    if (now - checkedAt < 1_000) return present;
    checkedAt = now;
    const still = existsSync(ctx.store.location);
    if (present && !still) {
      logger.warn(
        `The stored Cursor login was removed (${ctx.store.location}, e.g. by \`cursor-bridge logout\`): requests now fail as not logged in. Run \`cursor-bridge login\` and the next request uses the new login (no restart needed), or restart the server to serve the built-in emulator instead.`,
      );
    }
    if (!present && still) logger.info("A Cursor login is stored again; the next request uses it.");
    present = still;
    return present;
  };
}

/**
 * Who the stored login of an account is now (email or user id), for the status page: a new `login` (or `import`)
 * while the server runs is shown as the token source uses it, from its next request on. Read through the store at
 * most once a second; the file store answers an unchanged file with one `stat` and reads it only when it changed.
 * Credentials from the environment or from a parent process are not in the store: their identity is the one of the
 * start.
 */
export function storedLoginIdentity(
  store: CredentialStore,
  credentials: Pick<ResolvedCredentials, "origin" | "status">,
  now: () => number = Date.now,
): () => Promise<string | undefined> {
  let who = loginOf(credentials.status);
  if (credentials.origin !== "store") return async () => who;
  let checkedAt = now();
  let reading: Promise<string | undefined> | undefined;
  return () => {
    if (reading !== undefined) return reading;
    if (now() - checkedAt < 1_000) return Promise.resolve(who);
    checkedAt = now();
    reading = store
      .load()
      .then(
        (stored) => {
          who = stored?.email ?? stored?.userId;
          return who;
        },
        () => who,
      )
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
}

/**
 * Says at start that a stored session has expired: the first request renews it (one round trip to Cursor), and fails
 * with a retryable upstream error while Cursor is unreachable, or asks for a login if Cursor refuses the renewal.
 */
function warnExpired(logger: Logger, account: string, credentials: ResolvedCredentials, loginFlag: string): void {
  const status = credentials.status;
  if (status?.expired !== true) return;
  logger.warn(
    `The Cursor session of account \`${account}\` expired at ${status.expiresAt ?? "an unknown time"}: the first request renews it (Cursor must be reachable); if Cursor refuses, run \`cursor-bridge login${loginFlag}\`.`,
    { account },
  );
}

/**
 * A named account's tokens as its key holders see them: once the account is logged out (`logout --account NAME`
 * while the server runs), a request on it is the 403 `account_unknown` it would get after a restart, naming neither
 * the server's files nor a command they cannot run, instead of the operator's 401 "no credentials in PATH". A new
 * login of the account is used from the next request on.
 */
function namedAccountTokens(name: string, source: TokenSource, logger: Logger): TokenSource {
  let said = false;
  const loggedIn = (token: string): string => {
    if (said) logger.info(`The Cursor account \`${name}\` is logged in again; its requests run on it.`);
    said = false;
    return token;
  };
  const loggedOut = (error: unknown): never => {
    const proxyError = ProxyError.from(error);
    if (proxyError.code === "unauthenticated" && proxyError.detail === "not_logged_in") {
      if (!said) {
        logger.warn(
          `The Cursor account \`${name}\` was logged out: its requests get 403 until \`cursor-bridge login --account ${name}\` (no restart needed).`,
        );
        said = true;
      }
      throw new ProxyError(
        "permission_denied",
        `The Cursor account \`${name}\` was logged out on this cursor-bridge, so this request cannot run (it never runs on another account). The operator logs it in again with \`cursor-bridge login --account ${name}\`.`,
        { detail: "account_unknown", cause: proxyError },
      );
    }
    throw error;
  };
  return {
    getAccessToken: (signal) => source.getAccessToken(signal).then(loggedIn, loggedOut),
    refreshAfterUnauthenticated: (rejected, signal) =>
      source.refreshAfterUnauthenticated(rejected, signal).then(loggedIn, loggedOut),
  };
}

/** Where an upstream's conversations live: emulator conversations are kept apart from real ones. */
export function upstreamDataDir(config: Pick<BridgeConfig, "dataDir">, kind: UpstreamKind): string {
  return kind === "emulator" ? join(config.dataDir, "emulator") : config.dataDir;
}

/** Tokens for the embedded emulator: issued by it, re-issued before expiry and after a rejection. */
function emulatorTokenSource(emulator: Emulator, now: () => number): TokenSource {
  let token = emulator.issueTokens({ email: "emulator@localhost" }).accessToken;
  const fresh = () => {
    token = emulator.issueTokens({ email: "emulator@localhost" }).accessToken;
    return token;
  };
  return {
    getAccessToken: async () => {
      const exp = readJwtClaims(token)?.exp;
      return exp !== undefined && exp * 1000 - now() < 5 * 60_000 ? fresh() : token;
    },
    refreshAfterUnauthenticated: async () => fresh(),
  };
}

/**
 * The embedded emulator on a free loopback port (or on `listener`, bound earlier), with a token source it issues and
 * a CursorApi pointed at it.
 */
async function startEmbeddedEmulator(
  ctx: CliContext,
  logger: Logger,
  listener?: ReservedListener,
): Promise<{ emulator: Emulator; tokenSource: TokenSource; api: CursorApi }> {
  const { config } = ctx;
  // Loaded only when it serves: a logged-in server never runs the emulator's code.
  const [{ startEmulator }, { createCursorApi }] = await Promise.all([
    import("../emulator/index.js"),
    import("../protocol/cursor/cursor-api.js"),
  ]);
  const emulator = await startEmulator({
    host: listener?.host ?? "127.0.0.1",
    port: listener?.port ?? 0,
    ...(listener === undefined ? {} : { listener }),
    bootstrapLatencyMs: config.emulator.bootstrapLatencyMs,
    tokensPerSecond: config.emulator.tokensPerSecond,
    // Only this server calls it, by its 127.0.0.1 URL: no web page drives it under a name of its own.
    loopbackHostsOnly: true,
    logger: logger.child({ component: "emulator" }),
  });
  const tokenSource = emulatorTokenSource(emulator, ctx.now);
  const api = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: (signal) => tokenSource.getAccessToken(signal),
    clientVersion: () => ctx.clientVersion.version,
    transport: config.transport,
    streamsPerConnection: config.upstreamStreamsPerConnection,
    logger: logger.child({ component: "cursor" }),
  });
  return { emulator, tokenSource, api };
}

/** The Cursor API a server started with these settings would use, for commands that show what it would serve. */
export interface ServedApi {
  kind: UpstreamKind;
  api: CursorApi;
  close(): Promise<void>;
}

/**
 * Opens the API `serve` would use: Cursor with the stored (or environment) credentials, else (unless
 * `--upstream cursor`) the embedded emulator, so `models` and `usage` show what the server serves before a login.
 */
export async function openServedApi(ctx: CliContext, logger: Logger): Promise<ServedApi> {
  const credentials = ctx.config.upstream === "emulator" ? undefined : await ctx.resolveCredentials();
  if (credentials !== undefined) {
    const api = await ctx.createCursorApi(credentials.tokenSource);
    return { kind: "cursor", api, close: async () => api.close() };
  }
  if (ctx.config.upstream === "cursor") await ctx.requireCredentials();
  const { emulator, api } = await startEmbeddedEmulator(ctx, logger);
  return {
    kind: "emulator",
    api,
    close: async () => {
      api.close();
      await emulator.close();
    },
  };
}

/**
 * A failed call to Cursor from a CLI command (`models`, `usage`), naming the URL it went to when the failure was
 * reaching it (the mapped transport error says only the cause, e.g. ECONNREFUSED); other errors pass unchanged.
 */
export function namingCursorUrl(error: unknown, served: Pick<ServedApi, "kind">, url: string): unknown {
  const proxyError = ProxyError.from(error);
  if (served.kind !== "cursor" || (proxyError.code !== "backend_unavailable" && proxyError.code !== "timeout")) {
    return error;
  }
  const origin = new URL(url).origin;
  if (proxyError.message.includes(origin)) return error;
  return new ProxyError(proxyError.code, `Could not reach Cursor at ${origin}: ${proxyError.message}`, {
    cause: proxyError,
    retryable: proxyError.retryable,
  });
}

/**
 * Builds the upstream `choice` names, by default the one chosen by `config.upstream` (auto: Cursor when logged in,
 * else the emulator).
 */
export async function createUpstream(ctx: CliContext, logger: Logger, choice?: UpstreamChoice): Promise<Upstream> {
  const { config } = ctx;
  const chosen = choice ?? (await chooseUpstream(ctx));
  const credentials = chosen.kind === "cursor" ? chosen.credentials : undefined;
  if (credentials !== undefined) {
    const api = await ctx.createCursorApi(credentials.tokenSource, { logger: logger.child({ component: "cursor" }) });
    const named = await Promise.all(
      (chosen.kind === "cursor" ? (chosen.named ?? []) : []).map(async (login) => {
        const tokenSource = namedAccountTokens(login.name, login.credentials.tokenSource, logger);
        return {
          name: login.name,
          who: loginOf(login.credentials.status),
          tokenSource,
          api: await ctx.createCursorApi(tokenSource, {
            logger: logger.child({ component: "cursor", account: login.name }),
          }),
        };
      }),
    );
    const loggedIn = storedLoginWatch(ctx, credentials, logger);
    warnExpired(logger, ctx.account, credentials, "");
    for (const login of chosen.kind === "cursor" ? (chosen.named ?? []) : []) {
      warnExpired(logger, login.name, login.credentials, ` --account ${login.name}`);
    }
    return {
      kind: "cursor",
      get loggedIn() {
        return loggedIn();
      },
      account: loginOf(credentials.status),
      agentUrl: config.cursorAgentUrl,
      api,
      tokenSource: credentials.tokenSource,
      dataDir: upstreamDataDir(config, "cursor"),
      emulator: undefined,
      defaultAccount: ctx.account,
      named,
      close: async () => {
        api.close();
        for (const each of named) each.api.close();
      },
    };
  }
  const listener = chosen.kind === "emulator" ? chosen.listener : undefined;
  const { emulator, tokenSource, api } = await startEmbeddedEmulator(ctx, logger, listener);
  return {
    kind: "emulator",
    loggedIn: false,
    account: undefined,
    agentUrl: emulator.url,
    api,
    tokenSource,
    dataDir: upstreamDataDir(config, "emulator"),
    emulator,
    defaultAccount: ctx.account,
    named: [],
    close: async () => {
      api.close();
      await emulator.close();
    },
  };
}
