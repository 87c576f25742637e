/**
 * The prom-client registry of /metrics, built on the first scrape (gateway-metrics.ts loads this module then, and
 * prom-client with it): its counters and gauges read the request tally and the live sources when scraped, and Node's
 * process metrics start with it. Until the first scrape no metrics library is loaded: a start does not pay for it.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { Logger } from "../../util/logger.js";
import type { KeySpendSource } from "./key-spend-source.js";
import { METRIC_PREFIX } from "./metric-names.js";
import { type RequestTally, ROUTES, TOKEN_TYPES } from "./request-tally.js";
import { registerSpendGauges } from "./spend-gauges.js";

/** What the registry reads besides the request tally (gateway-metrics.ts's options). */
export interface RegistrySources {
  /** Turns parked on tool calls right now (the engine's parkedCount). */
  parkedCount: () => number;
  /** Per-key spend and budget; without it the spend gauges are not registered. */
  spend?: KeySpendSource | undefined;
  /** Node process metrics (CPU, memory, event loop, GC) under the prefix, started on the first scrape. @default true */
  processMetrics?: boolean;
  logger: Logger;
}

/** The registry, as gateway-metrics.ts reads it. */
export interface BuiltRegistry {
  /** Every family's text exposition. */
  metrics(): Promise<string>;
}

/** Creates the registry over `tally`, with the process metrics unless `options.processMetrics` is false. */
export function buildRegistry(tally: RequestTally, options: RegistrySources): BuiltRegistry {
  const registry = new Registry();
  const registers = [registry];
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

  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  return { metrics: () => registry.metrics() };
}
