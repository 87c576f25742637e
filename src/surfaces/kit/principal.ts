/**
 * Who a request comes from once the team gateway has authenticated it (issue #29): the virtual key it presented, the
 * named Cursor account the key is bound to, and what the key may use. The gateway (src/gateway/) creates it in its
 * auth middleware and sets it on the context (`c.set("principal", …)`); without virtual keys there is none and every
 * request runs as before. The kit only asks it the questions a turn needs answered.
 */

/** A budget: at most `usd` of spend per calendar `period` (UTC; weeks start on Monday). */
export interface KeyBudget {
  readonly usd: number;
  readonly period: "day" | "week" | "month";
}

/** The limits of one virtual key (`keys create --rpm/--tpm/--max-parallel/--budget`); absent = unlimited. */
export interface KeyLimits {
  /** Requests per minute. */
  readonly rpm?: number | undefined;
  /** Tokens (input + output) per minute. */
  readonly tpm?: number | undefined;
  /** Requests running at once. */
  readonly maxParallel?: number | undefined;
  readonly budget?: KeyBudget | undefined;
}

/** The authenticated caller of one request. */
export interface Principal {
  /** Stable id of the virtual key (never the key itself). */
  readonly keyId: string;
  /** The key's human name (`keys create --name`): what logs, metrics and the status page show. */
  readonly keyName: string;
  /** The named Cursor account the key's turns run on; undefined = the default account. */
  readonly account?: string | undefined;
  /** What the gateway's limits enforce for this key (src/gateway/limits). */
  readonly limits: KeyLimits;
  /**
   * Throws a 403 `permission_denied` ProxyError naming the model when the key may not use it. Called by the kit
   * after model-name resolution with the id the client sent and the Cursor model it resolved to.
   */
  checkModel(requested: string, resolved: string): void;
  /**
   * Calls `onGone` with the error to end the request with when the key stops working while the request runs
   * (revoked, rotated, expired); returns what stops watching. Absent: nothing is watched.
   */
  watchKey?(onGone: (error: Error) => void): () => void;
}
