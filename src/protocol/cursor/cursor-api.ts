/**
 * The Cursor API client (docs/protocol.md §1.2, §2.1, §4.2, §4.3, §6, §1.3): opens agent Runs over HTTP/2 with an
 * automatic fallback to HTTP/1.1 RunSSE + BidiAppend, and makes the unary calls the bridge needs. Per-request state
 * lives in each RunStream; the API object only holds configuration and the shared HTTP/2 sessions.
 */
import { randomUUID } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import { type CallOptions, type Client, createClient } from "@connectrpc/connect";
import type { AgentClientMessage } from "../../gen/agent/v1/agent_pb.js";
import { AgentService } from "../../gen/agent/v1/agent_service_pb.js";
import type { ModelDetails } from "../../gen/agent/v1/models_pb.js";
import { DashboardService, type GetCurrentPeriodUsageResponse } from "../../gen/aiserver/v1/dashboard_pb.js";
import {
  type GetServerConfigResponse,
  Http2Config,
  ServerConfigService,
} from "../../gen/aiserver/v1/server_config_pb.js";
import { type Logger, silentLogger } from "../../util/logger.js";
import { DEFAULT_HTTP2_BACKOFF, type Http2BackoffOptions, Http2Health } from "../connect/http2-health.js";
import { createTransportPool } from "../connect/transports.js";
import { type AvailableModelRow, decodeAvailableModels, RawAvailableModelsService } from "./available-models.js";
import { type ErrorMappingContext, toProxyError } from "./error-mapping.js";
import { startHttp2Run } from "./h2-run.js";
import { buildCursorHeaders, headersForLog } from "./headers.js";
import { RunOpening } from "./run-opening.js";
import type { RunStream, StartedRun } from "./run-stream.js";
import { startSseRun } from "./sse-run.js";

export type { AvailableModelRow } from "./available-models.js";
export { DEFAULT_CLIENT_VERSION, type ResolvedClientVersion, resolveClientVersion } from "./client-version.js";
export { toProxyError } from "./error-mapping.js";
export type { RunStream } from "./run-stream.js";
export { checkpointBytes, plainConversationState, readCheckpoint } from "./turn-decode.js";

/** Cursor's production host (§1.1). */
export const DEFAULT_CURSOR_URL = "https://api2.cursor.sh";
const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Transport choice: `auto` tries HTTP/2 for every call and falls back to HTTP/1.1 for that call when its HTTP/2
 * connection fails before any server output (see http2-health.ts for the backoff after repeated failures).
 */
export type CursorTransport = "auto" | "http2" | "http1";

/** Options of {@link createCursorApi}. */
export interface CursorApiOptions {
  /** Base URL of AgentService/Run, RunSSE and BidiAppend. @default "https://api2.cursor.sh" */
  agentUrl: string;
  /** Base URL of the unary RPCs (models, name, usage). @default "https://api2.cursor.sh" */
  apiUrl: string;
  /** Returns a valid access token (the backend passes its TokenSource here). */
  getAccessToken: (signal?: AbortSignal) => Promise<string>;
  /**
   * `x-cursor-client-version`, e.g. "cli-2026.10.01-e373342" (see resolveClientVersion); a function is read at every
   * call, so a version learned while serving (client-version-heal.ts) takes effect at once.
   */
  clientVersion: string | (() => string);
  /**
   * HTTP/2 `Run`, or HTTP/1.1 RunSSE + BidiAppend. `auto` falls back to HTTP/1.1 for one call when its HTTP/2
   * connection fails before any server output (never when the server answered, and never for one reset stream on a
   * working connection); after repeated failures in a row it goes to HTTP/1.1 directly for a growing pause.
   * @default "auto"
   */
  transport?: CursorTransport;
  /** `x-ghost-mode` (privacy mode). @default true */
  ghostMode?: boolean;
  /** Request ids (`x-request-id`, and the BidiRequestId on HTTP/1.1). @default crypto.randomUUID */
  newRequestId?: () => string;
  /** fetch used by the HTTP/1.1 path (RunSSE, BidiAppend, unary fallbacks). @default globalThis.fetch */
  fetch?: typeof fetch;
  /** @default silentLogger */
  logger?: Logger;
  /** Largest accepted message in either direction. @default 16 MiB */
  maxMessageBytes?: number;
  /** Pause of `auto` after repeated HTTP/2 connection failures to a base URL. @default 30 s doubling to 10 min */
  http2Backoff?: Http2BackoffOptions;
  /**
   * Most streams (Runs, a parked turn's included, and unary calls) on one HTTP/2 connection; a new connection opens
   * when every one is full, or at the server's SETTINGS_MAX_CONCURRENT_STREAMS if that is lower. @default 100
   */
  streamsPerConnection?: number;
  /** An HTTP/2 connection with no open stream for this long is closed. @default 60000 */
  connectionIdleMs?: number;
  /**
   * Deadline of each unary call (models, name, usage): a server that accepts the connection but never answers must
   * not hang the caller. Exceeding it is a `timeout` error. @default 30000
   */
  unaryTimeoutMs?: number;
  /** Clock of the HTTP/2 backoff. @default Date.now */
  now?: () => number;
}

/** Per-call options of {@link CursorApi.openRun}. */
export interface OpenRunOptions {
  /**
   * Aborts the Run while it opens (until openRun settles), the wait for its token included. An open Run is ended
   * with its `abort()`: the stream never sees the signal, and openRun removes its one listener when it settles, so a
   * Run kept open for minutes (a parked turn's) keeps no signal, listener or controller of its opening alive.
   */
  signal?: AbortSignal | undefined;
  /**
   * Bounds the whole open (the token, the HTTP/2 attempt and an HTTP/1.1 fallback) to this many ms: past it the Run
   * is aborted and openRun fails with a `timeout` ProxyError, detail `stalled` ("Cursor did not answer the Run
   * within N ms."). Its timer ends with the open: an open Run keeps none. @default no deadline
   */
  deadlineMs?: number;
  /**
   * Open the Run on a connection of its own, shared with no other turn (HTTP/2; HTTP/1.1 runs share nothing that a
   * dropped connection takes down with them): a retry after a dropped connection.
   */
  freshConnection?: boolean;
  /** Headers of this Run besides the usual ones (`x-cursor-agent-allowed-tools`, docs/protocol.md §2.1). */
  headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Called with an HTTP/2 Run once its request has left, before Cursor answers, so the caller can be ready to read
   * it when the answer comes instead of after (its answer and its first messages often arrive together). Such a Run
   * may still fail to open: openRun then rejects, or falls back to HTTP/1.1 and resolves with another stream. Not
   * called for an HTTP/1.1 Run, nor once the open has stopped.
   */
  onRequestSent?: ((stream: RunStream) => void) | undefined;
}

/** The Cursor API, as the backend sees it. */
export interface CursorApi {
  /** Opens a Run with `first` (the run_request) as the first client message. */
  openRun(first: AgentClientMessage, options?: OpenRunOptions): Promise<RunStream>;
  /** `GetUsableModels` (§6). */
  getUsableModels(signal?: AbortSignal): Promise<ModelDetails[]>;
  /** `GetDefaultModelForCli` (§6). */
  getDefaultModelForCli(signal?: AbortSignal): Promise<ModelDetails | undefined>;
  /** `NameAgent`: a short title for a chat (§1.2). */
  nameAgent(userMessage: string, signal?: AbortSignal): Promise<string>;
  /** `aiserver.v1.DashboardService/GetCurrentPeriodUsage` (§1.3). */
  getCurrentPeriodUsage(signal?: AbortSignal): Promise<GetCurrentPeriodUsageResponse>;
  /** `aiserver.v1.AiService/AvailableModels`: the legacy list that says which models accept images (optional). */
  availableModels?(signal?: AbortSignal): Promise<AvailableModelRow[]>;
  /** `aiserver.v1.ServerConfigService/GetServerConfig` (cursor-protocol-addendum-3.md E13; optional). */
  getServerConfig?(signal?: AbortSignal): Promise<GetServerConfigResponse>;
  /** Open streams of each shared HTTP/2 connection, by origin (tests, diagnostics). */
  http2Loads?(): Record<string, number[]>;
  /** Closes the shared HTTP/2 sessions (open runs on them are torn down). */
  close(): void;
}

/** A function, not an inline check, so TypeScript does not narrow `aborted` across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** Creates the Cursor API client. */
export function createCursorApi(options: CursorApiOptions): CursorApi {
  const mode = options.transport ?? "auto";
  const logger = options.logger ?? silentLogger;
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const newRequestId = options.newRequestId ?? randomUUID;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const now = options.now ?? Date.now;
  const backoff = options.http2Backoff ?? DEFAULT_HTTP2_BACKOFF;
  const pool = createTransportPool({
    fetch: fetchFn,
    maxMessageBytes,
    logger,
    sessions: {
      ...(options.streamsPerConnection === undefined ? {} : { maxStreamsPerSession: options.streamsPerConnection }),
      ...(options.connectionIdleMs === undefined ? {} : { idleTimeoutMs: options.connectionIdleMs }),
    },
  });
  const versionOption = options.clientVersion;
  const clientVersion = typeof versionOption === "function" ? versionOption : () => versionOption;
  const errorContext: ErrorMappingContext = {
    get clientVersion() {
      return clientVersion();
    },
  };
  const timeoutMs = options.unaryTimeoutMs ?? 30_000;
  /** Base URL → its HTTP/2 health (transport `auto`). */
  const health = new Map<string, Http2Health>();
  const healthOf = (baseUrl: string): Http2Health => {
    let known = health.get(baseUrl);
    if (known === undefined) {
      known = new Http2Health(backoff, now);
      health.set(baseUrl, known);
    }
    return known;
  };
  /**
   * `GetServerConfig.http2_config` as last answered (docs/protocol.md §4.3): with `auto`, HTTP/2 disabled for
   * everything, or for the bidi Run stream, sends those calls over HTTP/1.1; the enabled values change nothing.
   */
  let serverHttp2 = Http2Config.UNSPECIFIED;
  const http2Disabled = (bidi: boolean): boolean =>
    serverHttp2 === Http2Config.FORCE_ALL_DISABLED || (bidi && serverHttp2 === Http2Config.FORCE_BIDI_DISABLED);
  const noteServerConfig = (config: GetServerConfigResponse): GetServerConfigResponse => {
    if (config.http2Config !== serverHttp2) {
      serverHttp2 = config.http2Config;
      const hint = Http2Config[serverHttp2] ?? String(serverHttp2);
      if (mode !== "auto") logger.info("Cursor's server config sets HTTP/2 use; --transport decides", { hint, mode });
      else if (http2Disabled(true)) logger.info("Cursor's server config disables HTTP/2; using HTTP/1.1", { hint });
      else logger.info("Cursor's server config allows HTTP/2", { hint });
    }
    return config;
  };
  const tryHttp2 = (baseUrl: string, bidi: boolean): boolean =>
    mode === "auto" ? !http2Disabled(bidi) && healthOf(baseUrl).shouldTry() : mode === "http2";

  const headersFor = async (
    requestId: string,
    streaming: boolean,
    signal?: AbortSignal,
    extra?: Readonly<Record<string, string>>,
  ) => {
    const headers = buildCursorHeaders({
      accessToken: await options.getAccessToken(signal),
      clientVersion: clientVersion(),
      ghostMode: options.ghostMode ?? true,
      requestId,
      streaming,
    });
    // Into the fresh object, not a spread copy of it: a key added to a spread copy costs a fresh hidden class.
    return extra === undefined ? headers : Object.assign(headers, extra);
  };

  const logFallback = (baseUrl: string, what: string, error: unknown) => {
    const mapped = toProxyError(error, errorContext);
    logger.warn(`HTTP/2 connection for ${what} failed before any server output; using HTTP/1.1 for this call`, {
      baseUrl,
      code: mapped.code,
      detail: mapped.detail,
    });
  };
  /** HTTP/1.1 answered where HTTP/2 could not connect: count it (a pause starts after repeated failures). */
  const countFailure = (baseUrl: string, attempt: number) => {
    const pauseMs = healthOf(baseUrl).failed(attempt);
    if (pauseMs > 0) logger.warn("HTTP/2 failed repeatedly; using HTTP/1.1 for a while", { baseUrl, pauseMs });
  };

  const openHttp1 = (
    first: AgentClientMessage,
    requestId: string,
    extra: Readonly<Record<string, string>> | undefined,
  ): StartedRun =>
    startSseRun({
      pool,
      fetch: fetchFn,
      baseUrl: options.agentUrl,
      headers: (s) => headersFor(requestId, true, s, extra),
      requestId,
      first,
      logger,
      errorContext,
      maxMessageBytes,
    });

  const openRun = async (first: AgentClientMessage, runOptions: OpenRunOptions = {}): Promise<RunStream> => {
    const requestId = newRequestId();
    // The caller's abort and the deadline, for the whole open: the streams below never see a signal.
    const opening = new RunOpening(runOptions.signal, runOptions.deadlineMs);
    try {
      opening.check();
      let failedAttempt: number | undefined;
      if (tryHttp2(options.agentUrl, true)) {
        const attempt = healthOf(options.agentUrl).begin();
        // No signal for the token: the opening stops waiting for it (the token source's work is shared anyway).
        const headers = await opening.wait(headersFor(requestId, false, undefined, runOptions.headers));
        // Aborted while the token came (before the watchers were armed): send no request.
        opening.check();
        // A getter: the headers are copied and redacted only when debug lines are written (this runs every turn).
        logger.debug("Opening Run over HTTP/2", {
          baseUrl: options.agentUrl,
          get headers() {
            return headersForLog(headers);
          },
        });
        const started = startHttp2Run({
          pool,
          baseUrl: options.agentUrl,
          headers,
          requestId,
          first,
          logger,
          errorContext,
          maxMessageBytes,
          freshConnection: runOptions.freshConnection === true,
        });
        const onSent = runOptions.onRequestSent;
        opening.watch(started.stream, onSent === undefined ? undefined : () => onSent(started.stream));
        const outcome = await started.ready;
        if (outcome.ok) {
          if (mode === "auto") healthOf(options.agentUrl).succeeded();
          // Stopped as the answer came: the stop aborted the stream.
          opening.check();
          return started.stream;
        }
        started.stream.abort(outcome.error);
        // A stop (the caller's abort, the deadline) is never a connection failure to fall back from.
        opening.check();
        if (mode === "http2" || outcome.connectionFailed !== true) throw outcome.error;
        logFallback(options.agentUrl, "Run", outcome.error);
        failedAttempt = attempt;
      }
      logger.debug("Opening RunSSE over HTTP/1.1", { baseUrl: options.agentUrl, requestId });
      const started = openHttp1(first, requestId, runOptions.headers);
      opening.watch(started.stream);
      const outcome = await started.ready;
      opening.check();
      if (!outcome.ok) throw outcome.error;
      if (failedAttempt !== undefined) countFailure(options.agentUrl, failedAttempt);
      return started.stream;
    } catch (error) {
      throw toProxyError(error, errorContext);
    } finally {
      opening.release();
    }
  };

  /** One unary call with the same fallback and backoff rules as Run. */
  const unary = async <S extends DescService, T>(
    service: S,
    signal: AbortSignal | undefined,
    invoke: (client: Client<S>, callOptions: CallOptions) => Promise<T>,
  ): Promise<T> => {
    const baseUrl = options.apiUrl;
    const requestId = newRequestId();
    try {
      let failedAttempt: number | undefined;
      if (tryHttp2(baseUrl, false)) {
        const attempt = healthOf(baseUrl).begin();
        let responded = false;
        const call = pool.http2(baseUrl, () => {
          responded = true;
          if (mode === "auto") healthOf(baseUrl).succeeded();
        });
        const client = createClient(service, call.transport);
        const headers = await headersFor(requestId, false, signal);
        try {
          return await invoke(client, { headers, timeoutMs, ...(signal === undefined ? {} : { signal }) });
        } catch (error) {
          if (responded || mode === "http2" || isAborted(signal) || !call.connectionFailed()) throw error;
          logFallback(baseUrl, service.typeName, error);
          failedAttempt = attempt;
        }
      }
      let answered = false;
      const client = createClient(
        service,
        pool.http1(baseUrl, () => (answered = true)),
      );
      const headers = await headersFor(requestId, true, signal);
      try {
        return await invoke(client, { headers, timeoutMs, ...(signal === undefined ? {} : { signal }) });
      } finally {
        if (answered && failedAttempt !== undefined) countFailure(baseUrl, failedAttempt);
      }
    } catch (error) {
      throw toProxyError(error, errorContext);
    }
  };

  return {
    openRun,
    getUsableModels: (signal) => unary(AgentService, signal, async (c, o) => (await c.getUsableModels({}, o)).models),
    getDefaultModelForCli: (signal) =>
      unary(AgentService, signal, async (c, o) => (await c.getDefaultModelForCli({}, o)).model),
    nameAgent: (userMessage, signal) =>
      unary(AgentService, signal, async (c, o) => (await c.nameAgent({ userMessage }, o)).name),
    getCurrentPeriodUsage: (signal) => unary(DashboardService, signal, (c, o) => c.getCurrentPeriodUsage({}, o)),
    // The parameterised catalogue (docs/protocol.md §6.1): base ids, parameter definitions, variants.
    availableModels: (signal) =>
      unary(RawAvailableModelsService, signal, async (c, o) =>
        decodeAvailableModels(await c.availableModels({ useModelParameters: true }, o)),
      ),
    getServerConfig: async (signal) =>
      noteServerConfig(await unary(ServerConfigService, signal, (c, o) => c.getServerConfig({}, o))),
    http2Loads: () => pool.loads(),
    close: () => pool.close(),
  };
}
