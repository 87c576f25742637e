/**
 * The team gateway's limits (issue #29), one middleware that runs right after the auth middleware has set the
 * request's `principal` (no principal = no limits, the request runs as before). For the requests that run a Cursor
 * turn — POST /v1/chat/completions, /v1/responses and /v1/messages; /v1/models, count_tokens and reading or
 * deleting stored responses are neither limited nor counted — it:
 *
 * 1. once the kit knows the model and the key's allow-list accepted it (the `admitTurn` gate, kit/turn-admission.ts),
 *    reserves the turn's worst-case cost (worst-case.ts) against the key's budget in one atomic step of the spend
 *    store, or refuses with 429 `key_budget_exceeded` (`x-should-retry: false`, the reset time);
 * 2. admits the request against the key's rpm, tpm and max-parallel (atomically in the counters' store) or refuses
 *    with 429 `rate_limit_exceeded` and `Retry-After` (and gives the reservation back);
 * 3. while it runs, renews the lease of its slot and reservation (leases.ts) and hands the spend store its cost so far
 *    (running-costs.ts: the file and Redis stores record it, so a crash still bills it); when the answer is over (a streamed one
 *    when its body ended or the client went away), settles it: releases the parallel slot, counts its tokens for tpm
 *    and replaces the reservation by the real cost, once per request, from a durable queue when the store is down
 *    (settle-retry.ts);
 * 4. sends the rate-limit headers (rate-headers.ts), `x-cursor-bridge-cost` (this request, USD, six decimals) and
 *    `x-cursor-bridge-spend` (the key's spend this period) — on a streamed answer the spend so far at the start and
 *    the cost as trailers (streamed-cost.ts) — and a budget warning in `x-cursor-bridge-warnings` past the soft
 *    threshold (logged once per period, when a request crosses it).
 */
import type { MiddlewareHandler } from "hono";
import { createMemorySettleQueue } from "../../stores/memory/settle-queue.js";
import type {
  LimitCounters,
  PendingSettle,
  ReserveResult,
  SettleQueue,
  SpendStore,
  SpendTotals,
  WindowState,
} from "../../stores/types.js";
import type { AppEnv, RequestLog } from "../../surfaces/kit/access-log.js";
import type { Principal } from "../../surfaces/kit/principal.js";
import type { TurnToAdmit } from "../../surfaces/kit/turn-admission.js";
import { humanDuration } from "../../util/duration.js";
import { ProxyError } from "../../util/errors.js";
import type { Logger } from "../../util/logger.js";
import { createLeaseRenewer, LEASE_MS } from "./leases.js";
import { type BudgetPeriod, periodAt } from "./periods.js";
import { costMicroUsd, formatUsd, type PriceRule, priceOf, priceRules } from "./prices.js";
import { type RateSnapshot, rateHeaders, rateSnapshot } from "./rate-headers.js";
import { createRunningCosts } from "./running-costs.js";
import { createSettler } from "./settle-retry.js";
import { sendCostAsTrailers } from "./streamed-cost.js";
import { WINDOW_MS } from "./window.js";
import { CHARS_PER_TOKEN, worstCaseMicroUsd, worstCasePrice } from "./worst-case.js";

export { WINDOW_MS };

/** The period spend is kept for when a key has no budget. */
const DEFAULT_PERIOD = "month" as const;

/** Options of {@link createLimits}. */
export interface LimitsOptions {
  counters: LimitCounters;
  spend: SpendStore;
  logger: Logger;
  /** Price rules (the config's `prices` in front of the built-in table). @default the built-in table */
  prices?: readonly PriceRule[];
  /** Fraction of the budget past which answers carry a warning (`budgetWarnPercent` / 100). @default 0.8 */
  warnAt?: number;
  /** @default Date.now */
  now?: () => number;
  /** Unique ids of admitted requests. @default crypto.randomUUID */
  newId?: () => string;
  /** Where settles that failed wait to be retried (the instance's disk in `serve`). @default in memory */
  queue?: SettleQueue;
  /** Lease of a running request's slot and reservation (ms). @default LEASE_MS (30 s) */
  leaseMs?: number;
  /** Who the request comes from. @default the `principal` the auth middleware set */
  principalOf?: (c: Parameters<MiddlewareHandler<AppEnv>>[0]) => Principal | undefined;
}

/** A key as the limits saw it last (what the usage snapshot lists without a key store). */
export interface SeenKey {
  keyId: string;
  keyName: string;
  limits: Principal["limits"];
}

/** The limits: the middleware, and what the usage snapshot reads. */
export interface Limits {
  middleware: MiddlewareHandler<AppEnv>;
  spend: SpendStore;
  /** Keys that made a request since this instance started. */
  seenKeys(): SeenKey[];
  /** The period a key's spend is kept in (its budget's, else the calendar month). */
  periodOf(limits: Principal["limits"], now: number): BudgetPeriod;
  now: () => number;
  /** Retries the settles that failed now (else every 2 s while some wait). */
  drainPending(): Promise<number>;
  /**
   * Shutdown: stops the lease, retry and sweep timers, waits for the settles under way (at most
   * {@link CLOSE_WAIT_MS}), has the requests still unsettled charged (running-costs.ts) and closes the spend store
   * (its last write). Called before the store's connection closes.
   */
  close(): Promise<void>;
}

/** The longest a shutdown waits for the settles under way before the spend store's last write. */
export const CLOSE_WAIT_MS = 2_000;

const TURN_PATHS = new Set(["/v1/chat/completions", "/v1/responses", "/v1/messages"]);

/** Whether the request runs a Cursor turn (only those are limited and counted). */
export function runsTurn(method: string, path: string): boolean {
  return method === "POST" && TURN_PATHS.has(path.endsWith("/") ? path.slice(0, -1) : path);
}

const periodOf = (limits: Principal["limits"], now: number) => periodAt(limits.budget?.period ?? DEFAULT_PERIOD, now);
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** `$10.00`, `$0.50`, `$0.0001` (amounts under a cent keep their digits). */
const usd = (amount: number) => `$${amount >= 0.01 ? amount.toFixed(2) : String(Number(amount.toFixed(6)))}`;

function budgetExceeded(
  key: SeenKey,
  reserve: ReserveResult,
  worstCase: number,
  period: BudgetPeriod,
  now: number,
  headers: Record<string, string>,
): ProxyError {
  const budget = key.limits.budget?.usd ?? 0;
  const budgetMicro = Math.round(budget * 1_000_000);
  const spent = reserve.spent.microUsd;
  const wait = humanDuration(period.end - now);
  const reset = { ...headers, "x-cursor-bridge-budget-reset": rfc3339(period.end) };
  if (spent >= budgetMicro || spent + worstCase > budgetMicro) {
    const used = spent >= budgetMicro;
    const why = used
      ? `has used its budget of ${usd(budget)} per ${period.kind} (${formatUsd(spent)} USD spent)`
      : `cannot start this request: its worst-case cost of ${formatUsd(worstCase)} USD would pass the budget of ${usd(budget)} per ${period.kind} (${formatUsd(spent)} USD spent)`;
    return new ProxyError(
      "key_budget_exceeded",
      `Key "${key.keyName}" ${why}; it resets at ${rfc3339(period.end)} (${wait}).`,
      {
        detail: "spent",
        retryAfterSeconds: Math.ceil((period.end - now) / 1000),
        headers: reset,
      },
    );
  }
  // Only the requests running now hold the rest: it frees as soon as they end.
  return new ProxyError(
    "key_budget_exceeded",
    `Key "${key.keyName}" has ${formatUsd(budgetMicro - spent)} USD of its budget left, but ${formatUsd(reserve.reservedMicroUsd)} USD of it is held by its requests running now and this one may cost up to ${formatUsd(worstCase)} USD. Retry when they end.`,
    { detail: "held", retryAfterSeconds: 5, headers: reset },
  );
}

/** The longest rate-limit wait an SDK is told to sleep through (`x-should-retry: true`); longer ones say false. */
export const MAX_SLEPT_RETRY_S = 10;

const REFUSAL_DETAIL = { rpm: "key_rpm", tpm: "key_tpm", parallel: "key_parallel" } as const;

function rateLimited(
  key: SeenKey,
  state: WindowState,
  snapshot: RateSnapshot,
  headers: Record<string, string>,
): ProxyError {
  const refused = state.refused ?? "rpm";
  const what =
    refused === "rpm"
      ? `${key.limits.rpm} requests per minute`
      : refused === "tpm"
        ? `${key.limits.tpm} tokens per minute`
        : `${key.limits.maxParallel} requests at once`;
  const seconds = Math.ceil(snapshot.retryAfterMs / 1000);
  // A wait over 10 s is shown, not slept through: SDKs that obey `x-should-retry` (openai-node, Anthropic's) would
  // otherwise sit silent for up to a minute.
  return new ProxyError(
    "rate_limited",
    `Rate limit of key "${key.keyName}" reached: ${what}. Retry ${humanDuration(seconds * 1000)}.`,
    {
      detail: REFUSAL_DETAIL[refused],
      retryAfterSeconds: seconds,
      retryable: seconds <= MAX_SLEPT_RETRY_S,
      headers,
    },
  );
}

/** Sets a header on a finished response in place (see access-log.ts: copying it would slow streamed answers). */
function setHeader(res: Response, name: string, value: string): void {
  res.headers.set(name, value);
}

/** Builds the limits of the team gateway. */
export function createLimits(options: LimitsOptions): Limits {
  const now = options.now ?? Date.now;
  const newId = options.newId ?? (() => crypto.randomUUID());
  const rules = options.prices ?? priceRules();
  const warnAt = options.warnAt ?? 0.8;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const seen = new Map<string, SeenKey>();
  const { counters, spend, logger } = options;
  const leases = createLeaseRenewer({ counters, spend, logger, now, leaseMs });
  const settler = createSettler({ counters, spend, queue: options.queue ?? createMemorySettleQueue(), logger });
  /** Settles under way, which a shutdown waits for. */
  const settling = new Set<Promise<unknown>>();
  // The running requests' cost so far, recorded by the spend store that keeps it (a crash then still bills them).
  const runningCosts = createRunningCosts(spend, { logger });
  /** What a running request has cost so far, as if it were cut now (see cutTurnUsage). */
  const costSoFar = (turn: Admitted, log: RequestLog): SpendTotals | undefined => {
    if (log.usage === undefined && (log.outputChars === undefined || log.outputChars === 0)) return undefined;
    const usage = log.usage ?? cutTurnUsage(turn.turn, log.outputChars);
    if (usage === undefined) return undefined;
    return usageEntry(costMicroUsd(usage, priceOf(log.model, rules)), usage);
  };

  /** A turn let in: what its settle and its headers need. */
  interface Admitted {
    id: string;
    turn: TurnToAdmit;
    period: BudgetPeriod;
    spentBefore: SpendTotals;
    budgetMicro: number | undefined;
    /** The rate-limit headers at its admission. */
    rateHeaders: Record<string, string>;
    /** `x-cursor-bridge-spend` at its admission. */
    spentBeforeUsd: string;
  }

  const admit = async (key: SeenKey, turn: TurnToAdmit, anthropic: boolean): Promise<Admitted> => {
    const { limits } = key;
    const startedAt = now();
    const period = periodOf(limits, startedAt);
    const budgetMicro = limits.budget === undefined ? undefined : Math.round(limits.budget.usd * 1_000_000);
    const worstCase = budgetMicro === undefined ? 0 : worstCaseMicroUsd(turn, worstCasePrice(turn.model, rules));
    const id = newId();
    const reserved = await spend.reserve({
      keyId: key.keyId,
      period: period.id,
      id,
      microUsd: worstCase,
      budgetMicroUsd: budgetMicro,
      now: startedAt,
      leaseMs,
    });
    const spentBeforeUsd = formatUsd(reserved.spent.microUsd);
    const spendHeaders = () => ({ "x-cursor-bridge-spend": spentBeforeUsd, "x-cursor-bridge-cost": formatUsd(0) });
    // Checked first: a request refused for its budget takes no place in the rpm window.
    if (!reserved.admitted) throw budgetExceeded(key, reserved, worstCase, period, startedAt, spendHeaders());
    const giveBack = () =>
      spend.settle({ keyId: key.keyId, period: period.id, id, entry: zeroEntry() }).catch(() => undefined);
    let state: WindowState;
    try {
      state = await counters.admit({
        keyId: key.keyId,
        slotId: id,
        now: startedAt,
        windowMs: WINDOW_MS,
        rpm: limits.rpm ?? 0,
        tpm: limits.tpm ?? 0,
        maxParallel: limits.maxParallel ?? 0,
        leaseMs,
      });
    } catch (error) {
      await giveBack();
      throw error;
    }
    const snapshot = rateSnapshot(limits, state, startedAt, WINDOW_MS);
    const rate = rateHeaders(snapshot, startedAt, anthropic);
    if (state.refused !== undefined) {
      await giveBack();
      throw rateLimited(key, state, snapshot, { ...rate, ...spendHeaders() });
    }
    leases.hold(id, key.keyId, period.id);
    return { id, turn, period, spentBefore: reserved.spent, budgetMicro, rateHeaders: rate, spentBeforeUsd };
  };

  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const principal = options.principalOf === undefined ? c.get("principal") : options.principalOf(c);
    if (principal === undefined || !runsTurn(c.req.method, c.req.path)) return next();
    const key: SeenKey = { keyId: principal.keyId, keyName: principal.keyName, limits: principal.limits };
    seen.set(key.keyId, key);
    const { limits } = key;
    const anthropic = c.req.path.startsWith("/v1/messages");
    let admitted: Admitted | undefined;
    const log = c.get("log");
    c.set("admitTurn", async (turn) => {
      const held = await admit(key, turn, anthropic);
      admitted = held;
      runningCosts.hold(held.id, key.keyId, held.period.id, () => costSoFar(held, log));
    });

    let settled: Promise<{ cost: number; after: SpendTotals }> | undefined;
    /**
     * `received`: the client got the answer's output, so a turn cut before Cursor's usage is billed by estimate: a
     * streamed answer (cut short, it was partly received) or a JSON one that was sent (cut at a stop sequence or the
     * output cap); a JSON one that failed was not received at all.
     */
    const settle = (turn: Admitted, received: boolean) => {
      settled ??= (async () => {
        leases.release(turn.id);
        runningCosts.release(turn.id);
        const usage = log.usage ?? (received ? cutTurnUsage(turn.turn, log.outputChars) : undefined);
        const cost = costMicroUsd(usage, priceOf(log.model, rules));
        const item: PendingSettle = {
          keyId: key.keyId,
          id: turn.id,
          period: turn.period.id,
          entry: usageEntry(cost, usage),
          tokens: usage === undefined ? 0 : usage.inputTokens + usage.outputTokens,
          finishedAt: now(),
          countersDone: false,
        };
        const { before, after } = await settler.settle(item);
        const budgetMicro = turn.budgetMicro;
        if (
          budgetMicro !== undefined &&
          before.microUsd < budgetMicro * warnAt &&
          after.microUsd >= budgetMicro * warnAt
        ) {
          logger.warn(
            `key "${key.keyName}" has used ${Math.floor((after.microUsd / budgetMicro) * 100)}% of its budget`,
            {
              key: key.keyName,
              spend_usd: formatUsd(after.microUsd),
              budget_usd: limits.budget?.usd,
              period: turn.period.id,
              resets_at: rfc3339(turn.period.end),
            },
          );
        }
        return { cost, after };
      })();
      const running = settled;
      settling.add(running);
      running.then(
        () => settling.delete(running),
        () => settling.delete(running),
      );
      return settled;
    };

    try {
      await next();
    } catch (error) {
      if (admitted !== undefined) await settle(admitted, false).catch(() => undefined);
      throw error;
    }
    // Refused, or ended before its turn was let in (a bad request): nothing to settle.
    if (admitted === undefined) return;
    const turn: Admitted = admitted;
    const { budgetMicro, period } = turn;
    const res = c.res;
    for (const name in turn.rateHeaders) setHeader(res, name, turn.rateHeaders[name] ?? "");
    const warning = (spent: number) => {
      if (budgetMicro === undefined || spent < budgetMicro * warnAt) return;
      const text = `budget ${Math.floor((spent / budgetMicro) * 100)}% used ($${formatUsd(spent)} of ${usd(limits.budget?.usd ?? 0)} this ${period.kind}; resets ${rfc3339(period.end)})`;
      const existing = res.headers.get("x-cursor-bridge-warnings");
      setHeader(res, "x-cursor-bridge-warnings", existing === null ? text : `${existing} | ${text}`);
    };

    if (log.streaming === undefined) {
      try {
        const { cost, after } = await settle(turn, res.ok);
        setHeader(res, "x-cursor-bridge-cost", formatUsd(cost));
        setHeader(res, "x-cursor-bridge-spend", formatUsd(after.microUsd));
        warning(after.microUsd);
      } catch {
        // The answer stands; its cost is queued until the store is back (settle-retry.ts), so none is claimed here.
        res.headers.delete("x-cursor-bridge-cost");
        res.headers.delete("x-cursor-bridge-spend");
      }
      return;
    }
    // Streamed: the spend so far; the cost is not known yet (see streamed-cost.ts).
    setHeader(res, "x-cursor-bridge-spend", turn.spentBeforeUsd);
    warning(turn.spentBefore.microUsd);
    const streaming = log.streaming;
    sendCostAsTrailers(c, async () => {
      await streaming;
      const { cost, after } = await settle(turn, true);
      return { "x-cursor-bridge-cost": formatUsd(cost), "x-cursor-bridge-spend-after": formatUsd(after.microUsd) };
    });
    void streaming.finally(() => {
      settle(turn, true).catch(() => undefined);
    });
  };

  return {
    middleware,
    spend,
    seenKeys: () => [...seen.values()],
    periodOf,
    now,
    drainPending: settler.drain,
    async close() {
      leases.close();
      settler.close();
      runningCosts.close();
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      });
      await Promise.race([Promise.allSettled([...settling]), bound]);
      clearTimeout(timer);
      // Requests still unsettled end with this process: charged what they cost so far (a shared store), or recorded
      // for the next start to charge (the file store, at its close).
      await runningCosts.stopped();
      await spend.close?.();
    },
  };
}

/**
 * What a turn cut before Cursor reported its usage is billed: a client that went away mid-answer (or whose upstream
 * dropped), or whose answer the kit cut (a stop sequence, the output cap), received that much output, and Cursor ran
 * the turn. Estimated by the request's input estimate (the worst case's input), and the output handed out at
 * {@link CHARS_PER_TOKEN} characters a token; nothing when nothing was handed out (a turn refused or failed before its
 * first token). Such a turn used to cost nothing: a client could stop every answer just before its end and never use
 * up its budget.
 */
function cutTurnUsage(turn: TurnToAdmit, outputChars: number | undefined): RequestLog["usage"] {
  if (outputChars === undefined || outputChars === 0) return undefined;
  const inputTokens = turn.inputTokens();
  const outputTokens = Math.ceil(outputChars / CHARS_PER_TOKEN);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, source: "estimate" };
}

/** The spend entry of one request of `microUsd` with `usage`. */
function usageEntry(microUsd: number, usage: RequestLog["usage"]): SpendTotals {
  return {
    microUsd,
    requests: 1,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cachedTokens: usage?.cacheReadTokens ?? 0,
    reasoningTokens: usage?.reasoningTokens ?? 0,
  };
}

const zeroEntry = (): SpendTotals => ({
  microUsd: 0,
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedTokens: 0,
  reasoningTokens: 0,
});
