/**
 * What the first segment of a turn does when its Run fails while nothing has reached the caller's client
 * (docs/protocol.md §4.2 retry, §4.4 "Blob not found", §5.4): before any output, refresh the token once on
 * `unauthenticated` and rebuild the state from the caller's history once when a checkpoint or blob was rejected;
 * before or after Cursor's output began (a caller holding the events answers its client only at the end), retry
 * connection loss (once by default) on a connection of the turn's own, so another turn's failure on the same
 * connection costs this one nothing. Anything else (and anything once the client has received output) is thrown:
 * never a replay the client could see.
 */
import type { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import type { TokenSource } from "./types.js";

/** Per-turn counters, so each recovery happens a bounded number of times. */
export interface RecoveryState {
  refreshed: boolean;
  rebuilt: boolean;
  connectionRetries: number;
  /** The client version was renewed once after Cursor refused it as outdated. */
  versionRenewed?: boolean;
  /** The next Run opens on a connection of its own (set by a retry after a lost connection). */
  freshConnection?: boolean;
}

/** Inputs of {@link recoverFirstSegment}. */
export interface RecoveryContext {
  state: RecoveryState;
  /** The failed attempt was asked for a blob we did not have. */
  missingBlob: boolean;
  /** The failed attempt continued from a stored checkpoint. */
  continuing: boolean;
  /** Cursor's output had begun (held back from the client): only connection loss is retried. */
  afterOutput: boolean;
  /** Switches the turn to a rebuild from the caller's full history. */
  rebuild(): void;
  tokenSource: TokenSource;
  retry: { attempts: number; baseDelayMs: number };
  logger: Logger;
  signal: AbortSignal | undefined;
  /**
   * Cursor refused the client version as outdated: learn a newer one (client-version-heal.ts); true when the version
   * changed and the turn may be retried with it.
   */
  renewClientVersion?: (() => Promise<boolean>) | undefined;
}

/** Waits `ms`, rejecting early when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The agent API reports a rejected state as `internal` ("Blob not found", §4.4): with ErrorDetails that is
 * `blob_not_found`, without them a bare `internal`; a plain not-found may be the same. A model Cursor does not know
 * or no longer serves is a not-found too (`ERROR_BAD_MODEL_NAME`, cursor-protocol-addendum-3.md E4, P8), but no
 * rebuilt state brings the model back.
 */
function isStateRejection(error: ProxyError): boolean {
  if (error.detail === "model_not_found") return false;
  return error.detail === "blob_not_found" || error.detail === "internal" || error.code === "not_found";
}

/**
 * `unauthenticated` reasons that come from our own token source before Cursor was asked (no stored login, a renewal
 * Cursor refused, a token that cannot be renewed): refreshing "once more" cannot help, and saying Cursor rejected the
 * token would be false.
 */
const LOCAL_AUTH_FAILURES: ReadonlySet<ProxyError["detail"]> = new Set<ProxyError["detail"]>([
  "not_logged_in",
  "refresh_failed",
  "refresh_unavailable",
  "credentials_rejected",
  "invalid_credentials_file",
]);

/** Decides (and performs the waiting/refreshing for) one recovery; true when the caller should open a new Run. */
export async function recoverFirstSegment(error: ProxyError, ctx: RecoveryContext): Promise<boolean> {
  const { state, logger } = ctx;
  if (error.code === "canceled" || error.code === "timeout") return false;
  if (error.detail === "outdated_client" && !state.versionRenewed && !ctx.afterOutput && ctx.renewClientVersion) {
    state.versionRenewed = true;
    if (await ctx.renewClientVersion()) {
      logger.warn("Cursor refused the client version as outdated; retrying the turn once with the newer one learned");
      return true;
    }
  }
  if (
    error.code === "unauthenticated" &&
    !LOCAL_AUTH_FAILURES.has(error.detail) &&
    !state.refreshed &&
    !ctx.afterOutput
  ) {
    state.refreshed = true;
    logger.info("Cursor rejected the access token; refreshing once and retrying");
    const rejected = await ctx.tokenSource.getAccessToken(ctx.signal);
    await ctx.tokenSource.refreshAfterUnauthenticated(rejected, ctx.signal);
    return true;
  }
  if (!state.rebuilt && !ctx.afterOutput && (ctx.missingBlob || (ctx.continuing && isStateRejection(error)))) {
    state.rebuilt = true;
    logger.warn("Cursor rejected the stored conversation state; rebuilding it from the full history and retrying", {
      code: error.code,
      detail: error.detail,
      missingBlob: ctx.missingBlob,
    });
    ctx.rebuild();
    return true;
  }
  // A lost connection is retried here; a server fault Cursor reported (`internal`) is not: a fresh connection does
  // not mend it, and the client, told it may retry (x-should-retry), does so itself, as Cursor's own clients do.
  if (
    error.code === "backend_unavailable" &&
    error.retryable &&
    error.detail !== "internal" &&
    state.connectionRetries < ctx.retry.attempts
  ) {
    const delay = ctx.retry.baseDelayMs * 2 ** state.connectionRetries;
    state.connectionRetries += 1;
    // On a connection of its own: the connection that dropped may have carried other turns, whose retries (and
    // their failures) must not take this one down again.
    state.freshConnection = true;
    logger.warn("Lost the connection to Cursor before the client received anything; retrying on a fresh connection", {
      attempt: state.connectionRetries,
      afterOutput: ctx.afterOutput,
      delayMs: delay,
      detail: error.detail,
    });
    await sleep(delay, ctx.signal);
    return true;
  }
  return false;
}
