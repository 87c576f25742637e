/**
 * Scenario `gateway` (issue #29): what the team gateway adds to a request, side by side with it off. Both apps run
 * in this process on the real engine over an agent client that answers at once ("hi", usage, end), so the time
 * measured is the bridge's own handling of a non-streamed chat completion through `app.request()` (no sockets, no
 * upstream): the difference between the sides is the gateway's per-request cost. Requests alternate between the
 * sides in small batches so both see the same machine. Target: p50 overhead ≤ 0.2 ms per request.
 *
 * Sides: everything off; metrics on (counting requests and observing TTFT as `serve` does); and the whole gateway as
 * a team runs it: 100 virtual keys (the request presents one with a model list and rpm/tpm/budget, so the check
 * hashes it, finds its record, sets the principal and checks the model), the limits (memory counters and spend, one
 * window admission and one spend settlement per request, rate-limit and cost headers) and metrics.
 */
import type { AgentClient, AgentTurn } from "../src/backend/types.js";
import { createEngine } from "../src/engine/index.js";
import { createGateway, createKeyService } from "../src/gateway/index.js";
import { createLimits, priceRules } from "../src/gateway/limits/index.js";
import { type AppGateway, createApp } from "../src/server/app.js";
import { createMemoryAuditLog } from "../src/stores/memory/audit-log.js";
import { createMemoryKeyStore } from "../src/stores/memory/key-store.js";
import { createMemoryLimitCounters } from "../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../src/stores/memory/spend-store.js";
import type { AppDeps } from "../src/surfaces/kit/deps.js";
import { silentLogger } from "../src/util/logger.js";
import { testAppOptions } from "../test/support/app-options.js";
import {
  fmt,
  fmtSpread,
  percentile,
  type Spread,
  spreadOf,
  spreadTarget,
  type Table,
  type TargetResult,
} from "./report.js";

/** One configuration of the gateway. */
export interface GatewaySide {
  name: string;
  gateway: AppGateway;
  limits?: AppDeps["limits"];
  /** Headers every request of the side carries (the virtual key). */
  headers?: Record<string, string>;
  close?: () => void;
}

/** The sides measured by default: everything off, metrics on, then keys + limits + metrics. */
export async function gatewaySides(): Promise<GatewaySide[]> {
  const store = createMemoryKeyStore();
  const audit = createMemoryAuditLog();
  const service = createKeyService({ store, audit });
  const by = { actor: "bench", from: "bench" };
  let key = "";
  for (let i = 0; i < 100; i++) {
    const created = await service.create(
      { name: `user-${i}`, models: "gpt-5*", rpm: "1000000", tpm: "1000000000", budget: "1000000/month" },
      by,
    );
    key = created.key;
  }
  const keys = await createGateway({
    keys: store,
    audit,
    apiKey: undefined,
    adminKey: undefined,
    logger: silentLogger,
  });
  const limits = createLimits({
    logger: silentLogger,
    prices: priceRules(undefined),
    warnAt: 0.8,
    counters: createMemoryLimitCounters(),
    spend: createMemorySpendStore(),
  });
  return [
    { name: "gateway off", gateway: { metrics: false } },
    { name: "metrics on", gateway: {} },
    {
      name: "100 keys + limits + metrics",
      gateway: { auth: keys.auth },
      limits: limits.middleware,
      headers: { authorization: `Bearer ${key}` },
      close: () => keys.close(),
    },
  ];
}

/** Measurements of one side. */
export interface GatewaySideResult {
  name: string;
  /** p50 per repetition (ms). */
  p50: Spread;
  p99: Spread;
  /** p50 − the first side's p50, per repetition (ms). */
  addedP50: Spread;
}

/** The scenario's result. */
export interface GatewayOverheadResult {
  requestsPerSide: number;
  repetitions: number;
  sides: GatewaySideResult[];
}

const TARGET_MS = 0.2;

function quickAgentClient(): AgentClient {
  let runs = 0;
  return {
    listModels: async () => [
      { id: "gpt-5.2", displayName: "GPT-5.2", aliases: [], reasoning: false, maxMode: false, vision: true },
    ],
    startTurn(request): AgentTurn {
      runs++;
      const runId = `run-${runs}`;
      return {
        conversationId: request.conversationId,
        runId,
        status: "streaming",
        pendingToolCallIds: [],
        stream: async function* () {
          request.onRunOpened?.(runId);
          yield { type: "text-delta", text: "hi" } as const;
          yield {
            type: "usage",
            usage: { inputTokens: 46, outputTokens: 12, totalTokens: 58, cacheReadTokens: 40, reasoningTokens: 7 },
          } as const;
          yield { type: "turn-end", reason: "stop" } as const;
        },
        resume: async function* () {},
        close: async () => {},
      };
    },
  };
}

function appFor(side: GatewaySide) {
  let conversations = 0;
  return createApp(
    {
      engine: createEngine({ agentClient: quickAgentClient(), newConversationId: () => `conv-${++conversations}` }),
      logger: silentLogger,
      options: testAppOptions({ version: "bench" }),
      now: Date.now,
      newId: () => "id",
      ...(side.limits === undefined ? {} : { limits: side.limits }),
    },
    side.gateway,
  );
}

const BODY = JSON.stringify({ model: "gpt-5.2", messages: [{ role: "user", content: "hello" }] });

/** Runs the scenario. */
export async function runGatewayOverhead(
  requestsPerSide: number,
  repetitions: number,
  given?: readonly GatewaySide[],
): Promise<GatewayOverheadResult> {
  const sides = given ?? (await gatewaySides());
  try {
    return await measure(sides, requestsPerSide, repetitions);
  } finally {
    for (const side of sides) side.close?.();
  }
}

async function measure(
  sides: readonly GatewaySide[],
  requestsPerSide: number,
  repetitions: number,
): Promise<GatewayOverheadResult> {
  const apps = sides.map(appFor);
  const request = async (index: number): Promise<number> => {
    const app = apps[index];
    if (app === undefined) throw new Error(`no side ${index}`);
    const started = performance.now();
    const response = await app.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", ...sides[index]?.headers },
      body: BODY,
    });
    await response.text();
    if (response.status !== 200) throw new Error(`side ${sides[index]?.name}: status ${response.status}`);
    return performance.now() - started;
  };
  // Warm-up: every side's code paths compiled before anything is measured.
  for (let i = 0; i < 200; i++) for (let side = 0; side < sides.length; side++) await request(side);
  const p50s = sides.map((): number[] => []);
  const p99s = sides.map((): number[] => []);
  const batch = 20;
  for (let repetition = 0; repetition < repetitions; repetition++) {
    const samples = sides.map((): number[] => []);
    for (let done = 0; done < requestsPerSide; done += batch) {
      // Alternate which side goes first, so neither always runs on a warmer or calmer moment.
      const order = sides.map((_, i) => i);
      if ((done / batch) % 2 === 1) order.reverse();
      for (const side of order) for (let i = 0; i < batch; i++) samples[side]?.push(await request(side));
    }
    samples.forEach((values, side) => {
      p50s[side]?.push(percentile(values, 50));
      p99s[side]?.push(percentile(values, 99));
    });
  }
  const base = p50s[0] ?? [];
  return {
    requestsPerSide,
    repetitions,
    sides: sides.map((side, i) => ({
      name: side.name,
      p50: spreadOf(p50s[i] ?? []),
      p99: spreadOf(p99s[i] ?? []),
      addedP50: spreadOf((p50s[i] ?? []).map((p50, repetition) => p50 - (base[repetition] ?? Number.NaN))),
    })),
  };
}

/** The scenario's table and target (each side but the first against the first). */
export function gatewayOverheadReport(result: GatewayOverheadResult): { table: Table; targets: TargetResult[] } {
  const table: Table = {
    title: "Team gateway overhead per request (in-process app.request, non-streamed chat completion)",
    header: ["side", "p50 ms", "p99 ms", "added p50 ms"],
    rows: result.sides.map((side, i) => [
      side.name,
      fmtSpread(side.p50, 3),
      fmtSpread(side.p99, 3),
      i === 0 ? "—" : fmtSpread(side.addedP50, 3),
    ]),
    notes: [
      `${result.requestsPerSide} requests per side in each of ${result.repetitions} repetitions, alternating in batches of 20`,
      "an agent client that answers at once, so the time is the bridge's own handling; median (lowest–highest) over repetitions",
    ],
  };
  const off = result.sides[0];
  const targets = result.sides.slice(1).map((side) => ({
    ...spreadTarget(
      "gateway",
      `${side.name}: p50 overhead ≤ ${TARGET_MS} ms per request`,
      side.addedP50,
      {
        atMost: TARGET_MS,
      },
      "",
      3,
    ),
    floor: `${off?.name ?? "gateway off"}, p50 ${off === undefined ? "n/a" : fmt(off.p50.median, 3)} ms`,
  }));
  return { table, targets };
}
