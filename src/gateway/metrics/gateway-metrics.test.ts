import { Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import { parseExposition, sumOf } from "../../../test/support/prometheus-text.js";
import type { RequestDone, RequestLog } from "../../surfaces/kit/access-log.js";
import { decideError } from "../../surfaces/kit/error-policy.js";
import { ProxyError } from "../../util/errors.js";
import { silentLogger } from "../../util/logger.js";
import { createGatewayMetrics, EXPOSITION_CONTENT_TYPE } from "./gateway-metrics.js";

function done(path: string, log: Partial<RequestLog>, extra: Partial<RequestDone> = {}): RequestDone {
  return {
    method: "POST",
    path,
    surface: path === "/v1/chat/completions" ? "chat" : "other",
    api: path.startsWith("/v1/"),
    status: 200,
    log: { requestId: "r", startedAt: 1_000, ...log },
    principal: undefined,
    failure: undefined,
    streamFailed: false,
    endedAt: 2_000,
    ...extra,
  };
}

const metrics = () => createGatewayMetrics({ parkedCount: () => 3, processMetrics: false, logger: silentLogger });

describe("gateway metrics", () => {
  it("counts API requests only; /health and /metrics are not requests", async () => {
    const m = metrics();
    m.onRequestDone(done("/health", {}, { method: "GET" }));
    m.onRequestDone(done("/metrics", {}, { method: "GET" }));
    m.onRequestDone(done("/v1/chat/completions", { model: "gpt-5" }));
    const samples = parseExposition(await m.exposition());
    expect(sumOf(samples, "cursor_bridge_requests_total")).toBe(1);
    expect(sumOf(samples, "cursor_bridge_parked_turns")).toBe(3);
    expect(samples.some((s) => s.name.startsWith("cursor_bridge_process_"))).toBe(false);
  });

  it("observes TTFT in seconds from the request's arrival", async () => {
    const m = metrics();
    m.onRequestDone(done("/v1/chat/completions", { model: "gpt-5", firstTokenAt: 1_040 }));
    const samples = parseExposition(await m.exposition());
    expect(sumOf(samples, "cursor_bridge_time_to_first_token_seconds_sum")).toBeCloseTo(0.04, 9);
    expect(sumOf(samples, "cursor_bridge_time_to_first_token_seconds_bucket", { le: "0.025" })).toBe(0);
    expect(sumOf(samples, "cursor_bridge_time_to_first_token_seconds_bucket", { le: "0.05" })).toBe(1);
  });

  it("counts a stream that broke after the 200 as an error by its code", async () => {
    const m = metrics();
    const failure = decideError(new ProxyError("timeout", "stalled", { detail: "stalled" }));
    m.onRequestDone(done("/v1/chat/completions", { model: "gpt-5" }, { failure, streamFailed: true }));
    const samples = parseExposition(await m.exposition());
    expect(sumOf(samples, "cursor_bridge_requests_total", { status: "200" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_errors_total", { surface: "chat", code: "timeout" })).toBe(1);
  });

  it("bounds the model label: long ids are cut, past 100 distinct models the rest count as `other`", async () => {
    const m = metrics();
    for (let i = 0; i < 150; i++) m.onRequestDone(done("/v1/chat/completions", { model: `m${i}-${"x".repeat(300)}` }));
    const samples = parseExposition(await m.exposition());
    const models = new Set(
      samples.filter((s) => s.name === "cursor_bridge_requests_total").map((s) => s.labels.model as string),
    );
    expect(models.size).toBe(101);
    expect(sumOf(samples, "cursor_bridge_requests_total", { model: "other" })).toBe(50);
    for (const model of models) expect(model.length).toBeLessThanOrEqual(100);
  });

  it("answers with the Content-Type prom-client's registry writes (set without loading it)", () => {
    expect(metrics().contentType).toBe(EXPOSITION_CONTENT_TYPE);
    expect(EXPOSITION_CONTENT_TYPE).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
  });

  it("keeps two apps' registries apart", async () => {
    const a = metrics();
    const b = metrics();
    a.onRequestDone(done("/v1/chat/completions", { model: "gpt-5" }));
    expect(sumOf(parseExposition(await a.exposition()), "cursor_bridge_requests_total")).toBe(1);
    expect(sumOf(parseExposition(await b.exposition()), "cursor_bridge_requests_total")).toBe(0);
  });
});

describe("gateway metrics before the first scrape", () => {
  it("count requests without loading prom-client, which loads on the first scrape", async () => {
    vi.resetModules();
    let loaded = 0;
    vi.doMock("prom-client", async () => {
      loaded++;
      return await vi.importActual("prom-client");
    });
    try {
      const { createGatewayMetrics: fresh } = await import("./gateway-metrics.js");
      const m = fresh({ parkedCount: () => 0, processMetrics: false, logger: silentLogger });
      m.onRequestDone(done("/v1/chat/completions", { model: "gpt-5", firstTokenAt: 1_040 }));
      expect(loaded).toBe(0);
      const samples = parseExposition(await m.exposition());
      expect(loaded).toBe(1);
      expect(sumOf(samples, "cursor_bridge_requests_total")).toBe(1);
      expect(sumOf(samples, "cursor_bridge_time_to_first_token_seconds_count")).toBe(1);
      await m.exposition();
      expect(loaded).toBe(1);
    } finally {
      vi.doUnmock("prom-client");
      vi.resetModules();
    }
  });
});
