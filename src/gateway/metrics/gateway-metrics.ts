/**
 * The gateway's Prometheus metrics (issue #29), one registry per app: requests, tokens, time to first token, upstream
 * Runs, errors, parked turns, per-key spend and budget, and the process. Requests are counted from the access log's
 * completion (`onRequestDone`), so a streamed request is counted once its body is done, with the turn's final usage.
 *
 * Label values are bounded: `key` is a virtual key's name (never the key), `model` the Cursor model that served (a
 * client's unresolved id is cut to 100 characters, and past 100 distinct models the rest count as `other`), `surface`,
 * `status`, `route` and `code` come from closed sets. Label children are bound once per combination and reused.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { RequestDone } from "../../surfaces/kit/access-log.js";
import type { Logger } from "../../util/logger.js";
import type { KeySpend, KeySpendSource } from "./key-usage-source.js";

/** Every metric's name starts with it. */
export const METRIC_PREFIX = "cursor_bridge_";

/** Time-to-first-token buckets (seconds): 5 ms to 60 s. */
export const TTFT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Distinct `model` label values kept before the rest count as `other`. */
const MAX_MODELS = 100;
const MAX_LABEL_CHARS = 100;

/** The token kinds of `cursor_bridge_tokens_total` (`cached` and `cache_write` are part of `input`, `reasoning` of `output`). */
const TOKEN_TYPES = ["input", "output", "cached", "cache_write", "reasoning"] as const;

/** What the metrics read besides the requests. */
export interface GatewayMetricsOptions {
  /** Turns parked on tool calls right now (the engine's parkedCount). */
  parkedCount: () => number;
  /** Per-key spend and budget; without it the spend gauges are not registered. */
  spend?: KeySpendSource | undefined;
  /** Node process metrics (CPU, memory, event loop, GC) under the prefix, started on the first scrape. @default true */
  processMetrics?: boolean;
  logger: Logger;
}

/** The metrics of one app. */
export interface GatewayMetrics {
  readonly registry: Registry;
  /** The `Content-Type` of {@link GatewayMetrics.exposition}. */
  readonly contentType: string;
  /** Counts a finished request (an `onRequestDone` listener of the access log). */
  onRequestDone(done: RequestDone): void;
  /** The text exposition of every metric. */
  exposition(): Promise<string>;
}

interface Increment {
  inc(value?: number): void;
}

/** The label children of one (surface, model, key). */
interface Bound {
  requests: Map<number, Increment>;
  tokens: Record<(typeof TOKEN_TYPES)[number], Increment>;
  ttft: { observe(value: number): void };
}

const clampLabel = (value: string) => (value.length > MAX_LABEL_CHARS ? value.slice(0, MAX_LABEL_CHARS) : value);

/** Creates the registry and its metric families. */
export function createGatewayMetrics(options: GatewayMetricsOptions): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: `${METRIC_PREFIX}requests_total`,
    help: "API requests answered, by surface, HTTP status, Cursor model and virtual key name.",
    labelNames: ["surface", "status", "model", "key"] as const,
    registers,
  });
  const tokens = new Counter({
    name: `${METRIC_PREFIX}tokens_total`,
    help: "Tokens of finished turns by type (cached and cache_write are part of input, reasoning of output).",
    labelNames: ["surface", "model", "key", "type"] as const,
    registers,
  });
  const ttft = new Histogram({
    name: `${METRIC_PREFIX}time_to_first_token_seconds`,
    help: "Time from the request's arrival to the first text or reasoning token.",
    labelNames: ["surface", "model", "key"] as const,
    buckets: [...TTFT_BUCKETS],
    registers,
  });
  const runs = new Counter({
    name: `${METRIC_PREFIX}upstream_runs_total`,
    help: "Cursor turns by how they were reached: new Run, continued, resumed after tool calls, or replayed.",
    labelNames: ["route"] as const,
    registers,
  });
  const errors = new Counter({
    name: `${METRIC_PREFIX}errors_total`,
    help: "Failed API requests (before or after the status was sent) by surface and error code.",
    labelNames: ["surface", "code"] as const,
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}parked_turns`,
    help: "Cursor turns parked on tool calls, waiting for the client's results.",
    registers,
    collect() {
      this.set(options.parkedCount());
    },
  });
  if (options.spend !== undefined) registerSpend(registry, options.spend, options.logger);

  const bindings = new Map<string, Bound>();
  const models = new Set<string>();
  const modelLabel = (model: string | undefined): string => {
    if (model === undefined) return "";
    const label = clampLabel(model);
    if (models.has(label)) return label;
    if (models.size >= MAX_MODELS) return "other";
    models.add(label);
    return label;
  };
  const bind = (surface: string, model: string, key: string): Bound => {
    const id = `${surface}\u0000${model}\u0000${key}`;
    let bound = bindings.get(id);
    if (bound === undefined) {
      const child = (type: string) => tokens.labels(surface, model, key, type);
      bound = {
        requests: new Map(),
        tokens: {
          input: child("input"),
          output: child("output"),
          cached: child("cached"),
          cache_write: child("cache_write"),
          reasoning: child("reasoning"),
        },
        ttft: ttft.labels(surface, model, key),
      };
      bindings.set(id, bound);
    }
    return bound;
  };
  const runChildren = {
    new: runs.labels("new"),
    continued: runs.labels("continued"),
    resumed: runs.labels("resumed"),
    replayed: runs.labels("replayed"),
  };
  const errorChildren = new Map<string, Increment>();

  let processStarted = options.processMetrics === false;
  return {
    registry,
    contentType: registry.contentType,
    onRequestDone(done) {
      if (!done.api) return;
      const { log, surface } = done;
      const model = modelLabel(log.model);
      const key = clampLabel(done.principal?.keyName ?? "");
      const bound = bind(surface, model, key);
      let counter = bound.requests.get(done.status);
      if (counter === undefined) {
        counter = requests.labels(surface, String(done.status), model, key);
        bound.requests.set(done.status, counter);
      }
      counter.inc();
      const usage = log.usage;
      if (usage !== undefined) {
        bound.tokens.input.inc(usage.inputTokens);
        bound.tokens.output.inc(usage.outputTokens);
        bound.tokens.cached.inc(usage.cacheReadTokens ?? 0);
        bound.tokens.cache_write.inc(usage.cacheWriteTokens ?? 0);
        bound.tokens.reasoning.inc(usage.reasoningTokens ?? 0);
      }
      if (log.firstTokenAt !== undefined) bound.ttft.observe(Math.max(0, log.firstTokenAt - log.startedAt) / 1000);
      if (log.route !== undefined) runChildren[log.route].inc();
      if (done.failure !== undefined) {
        const code = done.failure.error.code;
        const id = `${surface}\u0000${code}`;
        let child = errorChildren.get(id);
        if (child === undefined) {
          child = errors.labels(surface, code);
          errorChildren.set(id, child);
        }
        child.inc();
      }
    },
    async exposition() {
      if (!processStarted) {
        processStarted = true;
        collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
      }
      return registry.metrics();
    },
  };
}

/**
 * The per-key spend gauges, filled on each scrape from one snapshot (both gauges' collects share it); a key that is
 * gone disappears. When the source fails the gauges are empty for that scrape and a warning is logged.
 */
function registerSpend(registry: Registry, source: KeySpendSource, logger: Logger): void {
  let pending: Promise<readonly KeySpend[]> | undefined;
  const snapshot = (): Promise<readonly KeySpend[]> => {
    if (pending === undefined) {
      pending = source
        .snapshot()
        .catch((error: unknown) => {
          logger.warn("Could not read the keys' spend for /metrics", { error });
          return [];
        })
        .finally(() => {
          pending = undefined;
        });
    }
    return pending;
  };
  const registers = [registry];
  new Gauge({
    name: `${METRIC_PREFIX}key_spend_usd`,
    help: "USD spent by a virtual key in its current budget period.",
    labelNames: ["key"] as const,
    registers,
    async collect() {
      const keys = await snapshot();
      this.reset();
      for (const key of keys) this.labels(clampLabel(key.keyName)).set(key.spendUsd);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}key_budget_usd`,
    help: "A virtual key's budget for its current period, in USD (keys with a budget only).",
    labelNames: ["key"] as const,
    registers,
    async collect() {
      const keys = await snapshot();
      this.reset();
      for (const key of keys) if (key.budgetUsd !== undefined) this.labels(clampLabel(key.keyName)).set(key.budgetUsd);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}key_budget_remaining_usd`,
    help: "USD left of a virtual key's budget in its current period (never below 0; keys with a budget only).",
    labelNames: ["key"] as const,
    registers,
    async collect() {
      const keys = await snapshot();
      this.reset();
      for (const key of keys) {
        if (key.budgetUsd !== undefined)
          this.labels(clampLabel(key.keyName)).set(Math.max(0, key.budgetUsd - key.spendUsd));
      }
    },
  });
}
