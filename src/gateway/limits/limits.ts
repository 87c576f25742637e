/**
 * The team gateway's limits (issue #29), one middleware that runs right after the auth middleware has set the
 * request's `principal` (no principal = no limits, the request runs as before). For the requests that run a Cursor
 * turn — POST /v1/chat/completions, /v1/responses and /v1/messages; /v1/models, count_tokens and reading or
 * deleting stored responses are neither limited nor counted — it:
 *
 * 1. refuses with 429 `budget_exceeded` (`x-should-retry: false`, the reset time) once the key's spend in its budget
 *    period reached the budget;
 * 2. admits the request against the key's rpm, tpm and max-parallel (atomically in the counters' store) or refuses
 *    with 429 `rate_limit_exceeded` and `Retry-After`;
 * 3. when the answer is over (a streamed one when its body ended or the client went away), releases the parallel
 *    slot, counts its tokens (input + output) for tpm and adds its cost to the key's spend;
 * 4. sends the rate-limit headers (rate-headers.ts), `x-cursor-bridge-cost` (this request, USD, six decimals) and
 *    `x-cursor-bridge-spend` (the key's spend this period) — on a streamed answer the spend so far at the start and
 *    the cost as trailers (streamed-cost.ts) — and a budget warning in `x-cursor-bridge-warnings` past the soft
 *    threshold (logged once per period, when a request crosses it).
 */
import type { MiddlewareHandler } from "hono";
import type { LimitCounters, SpendStore, SpendTotals, WindowState } from "../../stores/types.js";
import type { AppEnv } from "../../surfaces/kit/access-log.js";
import type { Principal } from "../../surfaces/kit/principal.js";
import { ProxyError } from "../../util/errors.js";
import type { Logger } from "../../util/logger.js";
import { type BudgetPeriod, periodAt } from "./periods.js";
import { costMicroUsd, formatUsd, type PriceRule, priceOf, priceRules } from "./prices.js";
import { type RateSnapshot, rateHeaders, rateSnapshot } from "./rate-headers.js";
import { sendCostAsTrailers } from "./streamed-cost.js";

/** The window rpm and tpm slide over. */
export const WINDOW_MS = 60_000;
/** A parallel slot not released by then (its instance died) frees itself. */
export const PARALLEL_LEASE_MS = 15 * 60_000;
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
}

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
  spent: SpendTotals,
  period: BudgetPeriod,
  now: number,
  headers: Record<string, string>,
): ProxyError {
  const budget = key.limits.budget?.usd ?? 0;
  const seconds = Math.ceil((period.end - now) / 1000);
  return new ProxyError(
    "quota_exceeded",
    `Key "${key.keyName}" has used its budget of ${usd(budget)} per ${period.kind} (${formatUsd(spent.microUsd)} USD spent); it resets at ${rfc3339(period.end)} (in ${seconds} s).`,
    {
      detail: "budget_exceeded",
      retryAfterSeconds: seconds,
      headers: { ...headers, "x-cursor-bridge-budget-reset": rfc3339(period.end) },
    },
  );
}

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
  return new ProxyError("rate_limited", `Rate limit of key "${key.keyName}" reached: ${what}. Retry in ${seconds} s.`, {
    detail: REFUSAL_DETAIL[refused],
    retryAfterSeconds: seconds,
    headers,
  });
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
  const seen = new Map<string, SeenKey>();
  const { counters, spend, logger } = options;

  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const principal = options.principalOf === undefined ? c.get("principal") : options.principalOf(c);
    if (principal === undefined || !runsTurn(c.req.method, c.req.path)) return next();
    const key: SeenKey = { keyId: principal.keyId, keyName: principal.keyName, limits: principal.limits };
    seen.set(key.keyId, key);
    const { limits } = key;
    const anthropic = c.req.path.startsWith("/v1/messages");
    const startedAt = now();
    const period = periodOf(limits, startedAt);
    const spentBefore = await spend.get(key.keyId, period.id);

    const spendHeaders = {
      "x-cursor-bridge-spend": formatUsd(spentBefore.microUsd),
      "x-cursor-bridge-cost": formatUsd(0),
    };
    const budgetMicro = limits.budget === undefined ? undefined : Math.round(limits.budget.usd * 1_000_000);
    // Checked first: a request refused for its budget takes no place in the rpm window.
    if (budgetMicro !== undefined && spentBefore.microUsd >= budgetMicro) {
      throw budgetExceeded(key, spentBefore, period, startedAt, spendHeaders);
    }

    const slotId = newId();
    const state = await counters.admit({
      keyId: key.keyId,
      slotId,
      now: startedAt,
      windowMs: WINDOW_MS,
      rpm: limits.rpm ?? 0,
      tpm: limits.tpm ?? 0,
      maxParallel: limits.maxParallel ?? 0,
      leaseMs: PARALLEL_LEASE_MS,
    });
    const snapshot = rateSnapshot(limits, state, startedAt, WINDOW_MS);
    const headers = { ...rateHeaders(snapshot, startedAt, anthropic), ...spendHeaders };
    if (state.refused !== undefined) throw rateLimited(key, state, snapshot, headers);

    const log = c.get("log");
    let settled: Promise<{ cost: number; after: SpendTotals }> | undefined;
    const settle = () => {
      settled ??= (async () => {
        const usage = log.usage;
        const cost = costMicroUsd(usage, priceOf(log.model, rules));
        const finishedAt = now();
        const tokens = usage === undefined ? 0 : usage.inputTokens + usage.outputTokens;
        await counters.settle(key.keyId, slotId, tokens, finishedAt, WINDOW_MS);
        const { before, after } = await spend.add(key.keyId, period.id, {
          microUsd: cost,
          requests: 1,
          inputTokens: usage?.inputTokens ?? 0,
          outputTokens: usage?.outputTokens ?? 0,
          cachedTokens: usage?.cacheReadTokens ?? 0,
          reasoningTokens: usage?.reasoningTokens ?? 0,
        });
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
              period: period.id,
              resets_at: rfc3339(period.end),
            },
          );
        }
        return { cost, after };
      })();
      return settled;
    };

    try {
      await next();
    } catch (error) {
      await settle().catch(() => undefined);
      throw error;
    }
    const res = c.res;
    for (const [name, value] of Object.entries(headers)) setHeader(res, name, value);
    const warning = (spent: number) => {
      if (budgetMicro === undefined || spent < budgetMicro * warnAt) return;
      const text = `budget ${Math.floor((spent / budgetMicro) * 100)}% used ($${formatUsd(spent)} of ${usd(limits.budget?.usd ?? 0)} this ${period.kind}; resets ${rfc3339(period.end)})`;
      const existing = res.headers.get("x-cursor-bridge-warnings");
      setHeader(res, "x-cursor-bridge-warnings", existing === null ? text : `${existing} | ${text}`);
    };

    if (log.streaming === undefined) {
      try {
        const { cost, after } = await settle();
        setHeader(res, "x-cursor-bridge-cost", formatUsd(cost));
        setHeader(res, "x-cursor-bridge-spend", formatUsd(after.microUsd));
        warning(after.microUsd);
      } catch (error) {
        // The answer stands; what it cost could not be recorded (the store is unreachable), so none is claimed.
        logger.warn("could not count a request against its key", { key: key.keyName, error });
        res.headers.delete("x-cursor-bridge-cost");
        res.headers.delete("x-cursor-bridge-spend");
      }
      return;
    }
    // Streamed: the cost is not known yet (see streamed-cost.ts).
    res.headers.delete("x-cursor-bridge-cost");
    warning(spentBefore.microUsd);
    const streaming = log.streaming;
    sendCostAsTrailers(c, async () => {
      await streaming;
      const { cost, after } = await settle();
      return { "x-cursor-bridge-cost": formatUsd(cost), "x-cursor-bridge-spend-after": formatUsd(after.microUsd) };
    });
    void streaming.finally(() => {
      settle().catch((error: unknown) =>
        logger.warn("could not count a request against its key", { key: key.keyName, error }),
      );
    });
  };

  return {
    middleware,
    spend,
    seenKeys: () => [...seen.values()],
    periodOf,
    now,
  };
}
