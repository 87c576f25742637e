/**
 * The done-when check of issue #29's metrics: a real Prometheus server (Debian's `prometheus` package) scrapes
 * `/metrics` of a bridge under test traffic, with docs/team.md's scrape config (bearer auth with the admin key), and a
 * PromQL query through its HTTP API returns the request count and the time-to-first-token histogram of that traffic.
 * Skips with a printed reason when the binary is missing, unless CI=true (then it fails).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, missingBinaries } from "../cluster/support/redis-server.js";
import { type Stack, startStack } from "../support/stack.js";

const skip = missingBinaries("prometheus");
const ADMIN_KEY = `admin-${randomUUID()}`;
const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";

interface PromVector {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

/** A Prometheus server scraping one target every second. */
async function startPrometheus(target: string, dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "scrape_configs:",
      "  - job_name: cursor-bridge",
      "    authorization:",
      "      type: Bearer",
      `      credentials: ${ADMIN_KEY}`,
      "    static_configs:",
      `      - targets: ["${target}"]`,
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { url, close };
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prometheus did not become ready within 20 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(skip !== undefined)("a real Prometheus scrapes /metrics", () => {
  let stack: Stack;
  let prometheus: { url: string; close(): Promise<void> } | undefined;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cursor-bridge-prometheus-"));
    stack = await startStack({ gateway: { adminKey: ADMIN_KEY } });
    prometheus = await startPrometheus(new URL(stack.server.url).host, dir);
  }, 40_000);
  afterAll(async () => {
    await prometheus?.close();
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function query(promql: string): Promise<PromVector["data"]["result"]> {
    const response = await fetch(`${prometheus?.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as PromVector;
    expect(body.status).toBe("success");
    return body.data.result;
  }

  /** The query's single value once it equals `want`, polled until 20 s have passed. */
  async function eventually(promql: string, want: number): Promise<number> {
    const deadline = Date.now() + 20_000;
    let last: number | undefined;
    for (;;) {
      const result = await query(promql);
      last = result[0] === undefined ? undefined : Number(result[0].value[1]);
      if (last === want || Date.now() > deadline) return last ?? Number.NaN;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it("returns the request count and the TTFT histogram of the test's traffic", async () => {
    const bodies: [string, unknown][] = [
      ["/chat/completions", { model: "auto", messages: [{ role: "user", content: MESSAGE }] }],
      ["/chat/completions", { model: "auto", stream: true, messages: [{ role: "user", content: MESSAGE }] }],
      ["/responses", { model: "auto", input: MESSAGE, store: false }],
      ["/messages", { model: "auto", max_tokens: 100, messages: [{ role: "user", content: MESSAGE }] }],
    ];
    for (const [path, body] of bodies) {
      const response = await fetch(`${stack.baseURL}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      await response.text();
    }

    expect(await eventually('up{job="cursor-bridge"}', 1)).toBe(1);
    expect(await eventually("sum(cursor_bridge_requests_total)", 4)).toBe(4);
    expect(await eventually('sum(cursor_bridge_requests_total{surface="chat",status="200"})', 2)).toBe(2);
    expect(await eventually("sum(cursor_bridge_time_to_first_token_seconds_count)", 4)).toBe(4);
    expect(await eventually('sum(cursor_bridge_tokens_total{type="input"})', 4 * 46)).toBe(4 * 46);

    const median = await query(
      "histogram_quantile(0.5, sum by (le) (cursor_bridge_time_to_first_token_seconds_bucket))",
    );
    const seconds = Number(median[0]?.value[1]);
    expect(Number.isFinite(seconds)).toBe(true);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(60);
  }, 60_000);
});
