/**
 * Chooses and builds the upstream the server talks to: the real Cursor service when credentials exist (or
 * `--upstream cursor`), otherwise the embedded emulator, started in-process on a free loopback port.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { BridgeConfig } from "../config/index.js";
import type { Emulator } from "../emulator/index.js";
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import type { UpstreamKind } from "../surfaces/kit/deps.js";
import { readJwtClaims } from "../util/jwt.js";
import type { Logger } from "../util/logger.js";
import type { ReservedListener } from "../util/reserved-listener.js";
import type { TokenSource } from "../util/token-source.js";
import type { CliContext } from "./context.js";
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
 * turns `/health`'s `logged_in` false and is logged once, with what to do. Credentials from the environment or from a
 * parent process are not in the file and stay logged in. The check is a stat, at most once a second.
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
        `The stored Cursor login was removed (${ctx.store.location}, e.g. by \`cursor-bridge logout\`): this server keeps its current token until it expires; restart it to serve the emulator, or run \`cursor-bridge login\` and restart.`,
      );
    }
    if (!present && still) logger.info("A Cursor login is stored again; restart the server to use it.");
    present = still;
    return present;
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
      (chosen.kind === "cursor" ? (chosen.named ?? []) : []).map(async (login) => ({
        name: login.name,
        who: loginOf(login.credentials.status),
        tokenSource: login.credentials.tokenSource,
        api: await ctx.createCursorApi(login.credentials.tokenSource, {
          logger: logger.child({ component: "cursor", account: login.name }),
        }),
      })),
    );
    const loggedIn = storedLoginWatch(ctx, credentials, logger);
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
