/**
 * Scenario "gateway": what the team gateway's key check adds to a request (issue #29: p50 overhead ≤ 0.2 ms). The
 * same app (server/app.ts, a models list from a stub engine, so the request is all guards and routing) answers
 * `GET /v1/models` without keys and with 100 virtual keys (the request presents a valid one, so the check hashes it,
 * finds its record and sets the principal). In-process `app.request`, sides interleaved in batches so neither gets a
 * warmer or calmer machine; reported: p50 and p99 per side and the difference.
 */
import type { AgentClient, ModelInfo } from "../src/backend/types.js";
import { createEngine } from "../src/engine/index.js";
import { createGateway, createKeyService } from "../src/gateway/index.js";
import { createApp } from "../src/server/app.js";
import { createMemoryAuditLog } from "../src/stores/memory/audit-log.js";
import { createMemoryKeyStore } from "../src/stores/memory/key-store.js";
import { silentLogger } from "../src/util/logger.js";
import { fmt, percentile, type Table, type TargetResult } from "./report.js";

/** Result of the scenario (ms). */
export interface GatewayOverheadResult {
  requestsPerSide: number;
  keys: number;
  off: { p50: number; p99: number };
  on: { p50: number; p99: number };
  addedP50: number;
  addedP99: number;
}

const MODELS: ModelInfo[] = [
  { id: "gpt-5.2", displayName: "GPT-5.2", aliases: [], reasoning: false, maxMode: false, vision: false },
];

function appOf(gateway?: Awaited<ReturnType<typeof createGateway>>) {
  const agentClient: AgentClient = {
    listModels: async () => MODELS,
    startTurn: () => {
      throw new Error("not used");
    },
  };
  return createApp(
    {
      engine: createEngine({ agentClient }),
      logger: silentLogger,
      options: {
        apiKey: undefined,
        corsOrigins: [],
        maxBodyBytes: 1 << 20,
        reasoningOutput: "reasoning_content",
        upstream: "emulator",
        loggedIn: false,
        version: "bench",
      },
      now: Date.now,
      newId: () => "id",
    },
    gateway === undefined ? undefined : { auth: gateway.auth },
  );
}

/** Runs the scenario: `requests` per side, in batches of 100. */
export async function runGatewayOverhead(requests = 5000): Promise<GatewayOverheadResult> {
  const store = createMemoryKeyStore();
  const service = createKeyService({ store, audit: createMemoryAuditLog() });
  const by = { actor: "bench", from: "bench" };
  let key = "";
  for (let i = 0; i < 100; i++) key = (await service.create({ name: `user-${i}`, models: "gpt-5*" }, by)).key;
  const gateway = await createGateway({
    keys: store,
    audit: createMemoryAuditLog(),
    apiKey: undefined,
    adminKey: undefined,
    logger: silentLogger,
  });
  interface Side {
    app: ReturnType<typeof appOf>;
    headers: Record<string, string>;
    times: number[];
  }
  const sides: { off: Side; on: Side } = {
    off: { app: appOf(), headers: {}, times: [] },
    on: { app: appOf(gateway), headers: { authorization: `Bearer ${key}` }, times: [] },
  };
  try {
    const one = async (side: Side) => {
      const started = performance.now();
      const response = await side.app.request("/v1/models", { headers: side.headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET /v1/models answered ${response.status}`);
      return performance.now() - started;
    };
    for (let warm = 0; warm < 500; warm++) {
      await one(sides.off);
      await one(sides.on);
    }
    for (let batch = 0; batch < requests / 100; batch++) {
      const order = batch % 2 === 0 ? [sides.off, sides.on] : [sides.on, sides.off];
      for (const side of order) for (let i = 0; i < 100; i++) side.times.push(await one(side));
    }
  } finally {
    gateway.close();
  }
  const stats = (times: number[]) => ({ p50: percentile(times, 50), p99: percentile(times, 99) });
  const off = stats(sides.off.times);
  const on = stats(sides.on.times);
  return { requestsPerSide: requests, keys: 100, off, on, addedP50: on.p50 - off.p50, addedP99: on.p99 - off.p99 };
}

/** The scenario's table and target. */
export function gatewayReport(result: GatewayOverheadResult): { table: Table; targets: TargetResult[] } {
  return {
    table: {
      title: "Team gateway: key check per request (GET /v1/models, in process)",
      header: ["", "p50 (ms)", "p99 (ms)"],
      rows: [
        ["keys off", fmt(result.off.p50, 3), fmt(result.off.p99, 3)],
        [`${result.keys} virtual keys`, fmt(result.on.p50, 3), fmt(result.on.p99, 3)],
        ["added", fmt(result.addedP50, 3), fmt(result.addedP99, 3)],
      ],
      notes: [
        `${result.requestsPerSide} requests per side, interleaved in batches of 100 after 500 warm-up requests each`,
      ],
    },
    targets: [
      {
        scenario: "gateway",
        target: "key check adds ≤ 0.2 ms at p50",
        measured: `${fmt(result.addedP50, 3)} ms`,
        met: result.addedP50 <= 0.2,
      },
    ],
  };
}
