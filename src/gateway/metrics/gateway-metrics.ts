/**
 * The gateway's Prometheus metrics (issue #29), one registry per app: requests, tokens, time to first token, upstream
 * Runs, errors, parked turns, per-key spend and budget, and the process. Requests are counted from the access log's
 * completion (`onRequestDone`), so a streamed request is counted once its body is done, with the turn's final usage.
 *
 * Counting a request adds to a plain tally (request-tally.ts): the counters read it when scraped, and the TTFT
 * histogram (ttft-histogram.ts) keeps its observations in it. prom-client and the registry (prom-registry.ts) load on
 * the first scrape, so a server nobody scrapes never loads a metrics library, and a start does not wait for one.
 * Label values are bounded: `key` is a virtual key's name (never the key), `model` the Cursor model that served (a
 * client's unresolved id is cut to 100 characters, and past 100 distinct models the rest count as `other`), `surface`,
 * `status`, `route` and `code` come from closed sets.
 */
import type { RequestDone } from "../../surfaces/kit/access-log.js";
import { loadOnce } from "../../util/code-on-disk.js";
import { METRIC_PREFIX } from "./metric-names.js";
import type { RegistrySources } from "./prom-registry.js";
import { createRequestTally } from "./request-tally.js";
import { createTtftHistogram } from "./ttft-histogram.js";

/** The `Content-Type` of the text exposition format (prom-client's registry writes the same). */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Time-to-first-token buckets (seconds): 5 ms to 60 s. */
export const TTFT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the metrics read besides the requests. */
export type GatewayMetricsOptions = RegistrySources;

/** The metrics of one app. */
export interface GatewayMetrics {
  /** The `Content-Type` of {@link GatewayMetrics.exposition}. */
  readonly contentType: string;
  /** Counts a finished request (an `onRequestDone` listener of the access log). */
  onRequestDone(done: RequestDone): void;
  /** The text exposition of every metric. */
  exposition(): Promise<string>;
}

/** Creates the metrics: counting starts at once, the registry (and prom-client) loads on the first scrape. */
export function createGatewayMetrics(options: GatewayMetricsOptions): GatewayMetrics {
  const tally = createRequestTally();
  const ttft = createTtftHistogram(
    `${METRIC_PREFIX}time_to_first_token_seconds`,
    "Time from the request's arrival to the first text or reasoning token.",
    TTFT_BUCKETS,
  );
  const registry = loadOnce(() =>
    import("./prom-registry.js").then(({ buildRegistry }) => buildRegistry(tally, options)),
  );
  return {
    contentType: EXPOSITION_CONTENT_TYPE,
    onRequestDone(done) {
      const series = tally.add(done);
      const firstTokenAt = done.log.firstTokenAt;
      if (series === undefined || firstTokenAt === undefined) return;
      ttft.observe(series, Math.max(0, firstTokenAt - done.log.startedAt) / 1000);
    },
    async exposition() {
      const text = await (await registry()).metrics();
      return `${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${ttft.exposition(tally.series())}`;
    },
  };
}
