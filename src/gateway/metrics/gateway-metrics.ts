/**
 * The gateway's Prometheus metrics (issue #29), one registry per app: requests, tokens, time to first token, upstream
 * Runs, errors, parked turns, per-key spend and budget, and the process. Requests are counted from the access log's
 * completion (`onRequestDone`), so a streamed request is counted once its body is done, with the turn's final usage.
 *
 * Counting a request adds to a plain tally (request-tally.ts) that the counters read when scraped, and observes the
 * TTFT histogram through a label child bound once per series.
 * Label values are bounded: `key` is a virtual key's name (never the key), `model` the Cursor model that served (a
 * client's unresolved id is cut to 100 characters, and past 100 distinct models the rest count as `other`), `surface`,
 * `status`, `route` and `code` come from closed sets.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { RequestDone } from "../../surfaces/kit/access-log.js";
import type { Logger } from "../../util/logger.js";
import type { KeySpendSource } from "./key-spend-source.js";
import { createRequestTally, ROUTES, type Series, TOKEN_TYPES } from "./request-tally.js";
import { registerSpendGauges } from "./spend-gauges.js";

/** Every metric's name starts with it. */
export const METRIC_PREFIX = "cursor_bridge_";

/** Time-to-first-token buckets (seconds): 5 ms to 60 s. */
export const TTFT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

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

/** Creates the registry and its metric families. */
export function createGatewayMetrics(options: GatewayMetricsOptions): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  const tally = createRequestTally();
  new Counter({
    name: `${METRIC_PREFIX}requests_total`,
    help: "API requests answered, by surface, HTTP status, Cursor model and virtual key name.",
    labelNames: ["surface", "status", "model", "key"] as const,
    registers,
    collect() {
      this.reset();
      for (const { surface, model, key, requests } of tally.series()) {
        for (const [status, count] of requests) this.inc({ surface, status: String(status), model, key }, count);
      }
    },
  });
  new Counter({
    name: `${METRIC_PREFIX}tokens_total`,
    help: "Tokens of finished turns by type (cached and cache_write are part of input, reasoning of output).",
    labelNames: ["surface", "model", "key", "type"] as const,
    registers,
    collect() {
      this.reset();
      for (const { surface, model, key, tokens } of tally.series()) {
        TOKEN_TYPES.forEach((type, index) => {
          const count = tokens[index] ?? 0;
          if (count > 0) this.inc({ surface, model, key, type }, count);
        });
      }
    },
  });
  const ttft = new Histogram({
    name: `${METRIC_PREFIX}time_to_first_token_seconds`,
    help: "Time from the request's arrival to the first text or reasoning token.",
    labelNames: ["surface", "model", "key"] as const,
    buckets: [...TTFT_BUCKETS],
    registers,
  });
  const ttftChildren = new Map<Series, { observe(seconds: number): void }>();
  new Counter({
    name: `${METRIC_PREFIX}upstream_runs_total`,
    help: "Cursor turns by how they were reached: new Run, continued, resumed after tool calls, or replayed.",
    labelNames: ["route"] as const,
    registers,
    collect() {
      this.reset();
      for (const route of ROUTES) this.inc({ route }, tally.runs[route]);
    },
  });
  new Counter({
    name: `${METRIC_PREFIX}errors_total`,
    help: "Failed API requests (before or after the status was sent) by surface and error code.",
    labelNames: ["surface", "code"] as const,
    registers,
    collect() {
      this.reset();
      for (const [surface, byCode] of tally.errors)
        for (const [code, count] of byCode) this.inc({ surface, code }, count);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}parked_turns`,
    help: "Cursor turns parked on tool calls, waiting for the client's results.",
    registers,
    collect() {
      this.set(options.parkedCount());
    },
  });
  if (options.spend !== undefined) registerSpendGauges(registry, METRIC_PREFIX, options.spend, options.logger);

  let processStarted = options.processMetrics === false;
  return {
    registry,
    contentType: registry.contentType,
    onRequestDone(done) {
      const series = tally.add(done);
      const firstTokenAt = done.log.firstTokenAt;
      if (series === undefined || firstTokenAt === undefined) return;
      let child = ttftChildren.get(series);
      if (child === undefined) {
        child = ttft.labels(series.surface, series.model, series.key);
        ttftChildren.set(series, child);
      }
      child.observe(Math.max(0, firstTokenAt - done.log.startedAt) / 1000);
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
