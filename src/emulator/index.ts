/**
 * The Cursor backend emulator: a strict stand-in for Cursor's servers (docs/protocol.md §1.2, §1.3, §2.1, §3, §4,
 * §5) on one port serving HTTP/2 cleartext and HTTP/1.1. This is the in-process API tests, benchmarks, `npm start`
 * and the `cursor-bridge emulator` command use.
 */
import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { type Logger, silentLogger } from "../util/logger.js";
import { hostnameOf, isLoopbackHost } from "../util/loopback-host.js";
import type { ReservedListener } from "../util/reserved-listener.js";
import { nodeRequestKey, registerServices } from "./agent-service.js";
import { createAuthority, type NodeRequest, type NodeResponse, type RefreshRefusal, sendJson } from "./auth.js";
import { BidiSessions } from "./bidi.js";
import { createBlobCache } from "./blobs.js";
import type { CatalogueModel } from "./catalogue.js";
import type { EmulatorHttp2Config } from "./http2-config.js";
import { createJwtSigner } from "./jwt.js";
import { createModelCatalogue } from "./models.js";
import { createRunRecorder } from "./record.js";
import { handleRest, UsageLedger } from "./rest.js";
import { listenDual } from "./server.js";
import { createStatsRecorder, type EmulatorStats, type StatsRecorder } from "./stats.js";
import { clientVersionDate, createStrictnessInterceptor, DEFAULT_MIN_CLIENT_VERSION } from "./strictness.js";

export type { RefreshRefusal } from "./auth.js";
export { type CatalogueModel, parseCatalogueFile } from "./catalogue.js";
export { describeEmulatorDirectives } from "./directive-help.js";
export { EMULATOR_HTTP2_CONFIGS, type EmulatorHttp2Config } from "./http2-config.js";
export { parseModelsFile } from "./models.js";
export { DEFAULT_EMULATOR_PORT } from "./port.js";
export type { EmulatorStats, TurnStats } from "./stats.js";
export { DEFAULT_MIN_CLIENT_VERSION } from "./strictness.js";

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** @default 0 (any free port); the CLI uses {@link DEFAULT_EMULATOR_PORT} */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** Delay before the first model output of each Run (benchmarks use 300). @default 0 */
  bootstrapLatencyMs?: number;
  /** Pace of text tokens; 0 = as fast as possible. @default 0 */
  tokensPerSecond?: number;
  /**
   * Older `x-cursor-client-version`s get the outdated-client error (a Run the "Update Required" refusal); it is the
   * minimum `GetServerConfig.client_version_status` names, and `GET /install` names the build after it.
   * @default "cli-2025.11.25-d5b3271"
   */
  minClientVersion?: string;
  /**
   * `GetServerConfig.http2_config`, the hint whether clients may use HTTP/2 (docs/protocol.md §4.3); only sent, the
   * emulator keeps serving both transports. @default unset
   */
  http2Config?: EmulatorHttp2Config;
  /** Interval of server `interaction_update.heartbeat` while nothing else is sent. @default 1000 */
  heartbeatIntervalMs?: number;
  /** HS256 secret of issued tokens. @default random per instance */
  jwtSecret?: string;
  /** @default 3600 */
  accessTokenTtlSeconds?: number;
  /**
   * Keep a content-addressed cache of blobs already fetched or set, so a correct client uploads each blob once
   * (only ids the received state references are ever read). @default true
   */
  cacheBlobs?: boolean;
  /** API keys accepted by `POST /auth/exchange_user_api_key` from the start (see {@link Emulator.addApiKey}). */
  apiKeys?: readonly string[];
  /**
   * How long a BidiAppend that arrived ahead of its seqno waits for the gap to fill before the Run fails
   * (cursor-protocol-addendum-2.md §2). @default 10000
   */
  appendGapTimeoutMs?: number;
  /** Model ids served besides the built-in catalogue (`emulator --models FILE`, models.ts). */
  extraModelIds?: readonly string[];
  /** Parameterised base models served besides the built-in ones (`emulator --catalogue FILE`, catalogue.ts). */
  extraBaseModels?: readonly CatalogueModel[];
  /**
   * Announce each step's parallel tool calls with `interaction_update.tool_requests_listed { call_count }` before
   * the first of them (cursor-protocol-addendum-2.md §4), so a client can stop waiting once the last one arrived.
   * `false` leaves it out, as a server that does not send it (`emulator --no-tool-call-count`). @default true
   */
  toolCallCount?: boolean;
  /**
   * SETTINGS_MAX_CONCURRENT_STREAMS of every HTTP/2 connection (`emulator --max-concurrent-streams`): a client must
   * spread more concurrent Runs over several connections. @default unlimited
   */
  maxConcurrentStreams?: number;
  /**
   * Write every Run's client and server messages as JSON lines, one file per Run, to this directory
   * (`emulator --record DIR`, record.ts). @default no recording
   */
  recordDir?: string;
  /**
   * Answer only requests whose `Host` (HTTP/2: `:authority`) names loopback (`localhost`, 127.0.0.0/8, `::1`): the
   * emulator `serve` embeds, which only serve itself calls, by its 127.0.0.1 URL. A web page that points a name of its
   * own at 127.0.0.1 (DNS rebinding) sends that name and gets a 421. The standalone `emulator` command answers any
   * name (clients in containers and on other machines reach it by theirs). @default false
   */
  loopbackHostsOnly?: boolean;
  /** @default silent */
  logger?: Logger;
  /**
   * A port bound earlier (util/reserved-listener.ts) to serve instead of binding host:port, so the caller could print
   * the emulator's URL before loading it; `host` and `port` must then name that port.
   */
  listener?: ReservedListener;
}

/** A running emulator. */
export interface Emulator {
  /** `http://<host>:<port>` */
  readonly url: string;
  stats(): EmulatorStats;
  resetStats(): void;
  issueTokens(options?: { userId?: string; email?: string; expiresInSeconds?: number }): {
    accessToken: string;
    refreshToken: string;
  };
  /** Approves a pending browser login so `GET /auth/poll?uuid=…` answers with tokens. */
  approveLogin(uuid: string, options?: { userId?: string; email?: string }): void;
  /** Registers an API key accepted by `POST /auth/exchange_user_api_key`. */
  addApiKey(apiKey: string, options?: { userId?: string; email?: string }): void;
  /**
   * Ends a browser login: `POST /oauth/token` answers its refresh token with `shouldLogout: true`, or with
   * `"invalid_grant"` OAuth's 400 `{error: "invalid_grant"}` (auth.ts).
   */
  revokeRefreshToken(refreshToken: string, refusal?: RefreshRefusal): void;
  /**
   * Puts a user at their usage limit (or takes them off it with `false`): their Runs fail with the usage-limit
   * error (`resource_exhausted`, `ERROR_PRO_USER_USAGE_LIMIT`) and their plan usage reports the whole limit spent,
   * while other users keep working (named accounts, issue #29).
   */
  limitUsage(userId: string, limited?: boolean): void;
  /** Closes every connection and stream; leaves no timer behind. */
  close(): Promise<void>;
}

/** Starts an emulator. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? "127.0.0.1";
  const stats = createStatsRecorder();
  const authority = createAuthority({
    signer: createJwtSigner(options.jwtSecret ?? randomBytes(32).toString("hex")),
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3600,
    logger,
    onAuthCall: (route) => stats.countAuth(route),
  });
  for (const apiKey of options.apiKeys ?? []) authority.addApiKey(apiKey);
  const bidi = new BidiSessions(logger, options.appendGapTimeoutMs);
  const recorder = options.recordDir === undefined ? undefined : createRunRecorder(options.recordDir, logger);
  const models = createModelCatalogue(options.extraModelIds, options.extraBaseModels);
  const usage = new UsageLedger();
  const limitedUsers = new Set<string>();
  const usageLimited = (userId: string) => limitedUsers.has(userId);
  const minClientVersion = options.minClientVersion ?? DEFAULT_MIN_CLIENT_VERSION;
  const clientVersions = { minimum: minClientVersion, current: buildAfter(minClientVersion) };
  const shutdown = new AbortController();
  // Every Connect handler links its call's signal to this one shutdown signal, so hundreds of concurrent Runs are
  // hundreds of listeners by design, not a leak: lift Node's default limit of 10 for this signal only.
  setMaxListeners(0, shutdown.signal);
  const connectHandler = connectNodeAdapter({
    routes: (router) =>
      registerServices(router, {
        bidi,
        usageLimited,
        clientVersions,
        http2Config: options.http2Config,
        ...(recorder === undefined ? {} : { recorder }),
        turn: {
          bootstrapLatencyMs: options.bootstrapLatencyMs ?? 0,
          tokensPerSecond: options.tokensPerSecond ?? 0,
          toolCallCount: options.toolCallCount ?? true,
          heartbeatIntervalMs: options.heartbeatIntervalMs ?? 1000,
          cache: createBlobCache({ enabled: options.cacheBlobs ?? true }),
          stats,
          logger,
          models,
          usage,
          overflowOnce: { fired: false },
        },
      }),
    interceptors: [
      createStrictnessInterceptor({
        authority,
        minClientVersion,
        usageLimited,
      }),
    ],
    // Current clients send `connect-protocol-version: 1`; older ones omit it on unary calls, and nothing shows the
    // real service refusing them (cursor-protocol-addendum-2.md §1): accepted either way.
    requireConnectProtocolHeader: false,
    shutdownSignal: shutdown.signal,
    contextValues: (req) => createContextValues().set(nodeRequestKey, req),
    fallback: (req, res) => {
      if (serveStats(req, res, stats)) return;
      if (serveInstallScript(req, res, clientVersions.current)) return;
      if (handleRest(req, res, { authority, models, usage })) return;
      if (!authority.handle(req, res)) sendJson(res, 404, { error: "Not found" });
    },
  });
  const loopbackHostsOnly = options.loopbackHostsOnly === true;
  const handler = (req: NodeRequest, res: NodeResponse): void => {
    if (loopbackHostsOnly && !namesLoopback(req)) {
      sendJson(res, 421, { error: "This emulator answers loopback host names only (localhost, 127.0.0.1, ::1)." });
      return;
    }
    const started = Date.now();
    res.once("finish", () =>
      logger.info("request", {
        method: req.method,
        path: req.url?.split("?")[0],
        http: req.httpVersion,
        status: res.statusCode,
        ms: Date.now() - started,
      }),
    );
    connectHandler(req, res);
  };
  const server = await listenDual(handler, host, options.port ?? 0, options.listener, {
    maxConcurrentStreams: options.maxConcurrentStreams,
  });
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${server.port}`,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    issueTokens: (opts) => authority.issueTokens(opts),
    approveLogin: (uuid, opts) => authority.approveLogin(uuid, opts),
    addApiKey: (apiKey, opts) => authority.addApiKey(apiKey, opts),
    revokeRefreshToken: (token, refusal) => authority.revokeRefreshToken(token, refusal),
    limitUsage: (userId, limited = true) => {
      if (limited) limitedUsers.add(userId);
      else limitedUsers.delete(userId);
    },
    async close() {
      shutdown.abort();
      bidi.closeAll();
      await server.close();
    },
  };
}

/** Whether the request's `Host` (HTTP/2: `:authority`) names loopback; a missing or empty one does not. */
function namesLoopback(req: NodeRequest): boolean {
  const authority = req.headers[":authority"] ?? req.headers.host;
  return typeof authority === "string" && authority !== "" && isLoopbackHost(hostnameOf(authority));
}

/**
 * `GET /emulator/stats`: the `stats()` snapshot plus `runs` (Run + RunSSE calls started), for tests in other
 * processes; `GET /emulator/runs/<run id>`: one Run's record. Answers loopback peers only, like the emulator itself; returns false for any other path.
 */
function serveStats(req: NodeRequest, res: NodeResponse, stats: StatsRecorder): boolean {
  const path = req.url?.split("?")[0] ?? "";
  const run = /^\/emulator\/runs\/([^/]+)$/.exec(path);
  if (path !== "/emulator/stats" && run === null) return false;
  if (!isLoopbackPeer(req.socket.remoteAddress)) {
    sendJson(res, 403, { error: "The emulator's stats are served to loopback clients only." });
  } else if (req.method !== "GET") {
    sendJson(res, 405, { error: `Use GET ${path}.` });
  } else if (run !== null) {
    // One Run's record (TurnStats): its id, recorded headers, model, bytes and outcome.
    let runId = "";
    try {
      runId = decodeURIComponent(run[1] ?? "");
    } catch {
      sendJson(res, 400, { error: "Malformed run id." });
      return true;
    }
    const found = stats.findRun(runId);
    if (found === undefined) sendJson(res, 404, { error: `Run ${runId} not found.` });
    else sendJson(res, 200, found);
  } else {
    const snapshot = stats.snapshot();
    sendJson(res, 200, { runs: snapshot.runStreams + snapshot.runSseStreams, ...snapshot });
  }
  return true;
}

function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return address === "::1" || /^127\.\d+\.\d+\.\d+$/.test(v4);
}

/** The build a day after `version` (`cli-YYYY.MM.DD-sha`): the current build the emulator names. */
function buildAfter(version: string): string {
  const date = clientVersionDate(version);
  if (date === undefined) return version;
  const text = String(date);
  const next = new Date(Date.UTC(Number(text.slice(0, 4)), Number(text.slice(4, 6)) - 1, Number(text.slice(6, 8)) + 1));
  const day = next.toISOString().slice(0, 10).replaceAll("-", ".");
  return `cli-${day}-e1e1e1e`;
}

/**
 * `GET /install`: a fixed install script in the shape of Cursor's (cursor-protocol-addendum-3.md E9) naming the
 * current build in its `downloads.cursor.com/lab/<YYYY.MM.DD-sha>/` path; nothing is downloaded from it.
 */
function serveInstallScript(req: NodeRequest, res: NodeResponse, current: string): boolean {
  if (req.url?.split("?")[0] !== "/install" || req.method !== "GET") return false;
  const build = current.replace(/^cli-/, "");
  const script = [
    "#!/usr/bin/env bash",
    "# cursor-bridge emulator: the shape of Cursor's install script, naming the emulator's current build.",
    "set -euo pipefail",
    'OS="$(uname -s | tr "[:upper:]" "[:lower:]")"',
    'ARCH="$(uname -m)"',
    `DOWNLOAD_URL="https://downloads.cursor.com/lab/${build}/\${OS}/\${ARCH}/agent-cli-package.tar.gz"`,
    'echo "Would download $DOWNLOAD_URL"',
    "",
  ].join("\n");
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(script) });
  res.end(script);
  return true;
}
