/**
 * The Cursor wire layer against the emulator over real sockets, on both transports (docs/protocol.md §4.2, §4.3):
 * a hand-driven echo turn, BidiAppend seqno order, the automatic HTTP/2 → HTTP/1.1 fallback behind an HTTP/1.1-only
 * proxy, no fallback on a Connect error answer, abort mid-stream, the unary RPCs and authentication failures.
 */
import { type AddressInfo, createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { type CursorApi, type CursorApiOptions, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { ProxyError } from "../../src/util/errors.js";
import { startH1Proxy } from "./support/h1-proxy.js";
import { driveTurn, HandBlobs, runRequest } from "./support/hand-turn.js";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

const CLIENT_VERSION = "cli-2026.01.17-d239e66";
let emulator: Emulator;
let accessToken: string;
const apis: CursorApi[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  accessToken = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});
afterEach(() => {
  for (const api of apis.splice(0)) api.close();
});

function apiFor(options: Partial<CursorApiOptions> = {}): CursorApi {
  const api = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: async () => accessToken,
    clientVersion: CLIENT_VERSION,
    ...options,
  });
  apis.push(api);
  return api;
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until `check` passes (the emulator records a turn's end asynchronously). */
async function eventually(check: () => void, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

describe.each(["http2", "http1"] as const)("Run over %s against the emulator", (transport) => {
  it("carries an echo turn in both directions", async () => {
    const blobs = new HandBlobs();
    const run = await apiFor({ transport }).openRun(runRequest("hello transport", blobs));
    expect(run.transport).toBe(transport);
    const result = await driveTurn(run, blobs);
    expect(result.text).toContain("You said: hello transport");
    expect(result.turnEnded).toBe(true);
    expect(emulator.stats().turns.at(-1)?.transport).toBe(transport);
    // Our count of serialized client bytes is exactly what the server decoded.
    await eventually(() => expect(emulator.stats().turns.at(-1)?.requestBytes).toBe(run.bytesSent));
    await expect(run.send(runRequest("late", blobs))).rejects.toBeInstanceOf(ProxyError);
  });

  it("abort mid-stream ends the turn as canceled and the server sees the client go", async () => {
    emulator.resetStats();
    const blobs = new HandBlobs();
    const run = await apiFor({ transport }).openRun(runRequest("[[emu:tokens 400]] [[emu:rate 40]]", blobs));
    const error = await driveTurn(run, blobs, (message) => {
      if (message.message.case === "interactionUpdate" && message.message.value.message.case === "textDelta") {
        run.abort();
      }
    }).catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("canceled");
    await expect(run.send(runRequest("after", blobs))).rejects.toMatchObject({ code: "canceled" });
    // The server saw the client go (stream reset / RunSSE closed) instead of finishing the 10-second answer.
    await eventually(() => expect(emulator.stats().turns).toMatchObject([{ transport, outcome: "client_closed" }]));
  });

  it("an expired token is unauthenticated, on Run and on unary calls", async () => {
    const expired = emulator.issueTokens({ expiresInSeconds: -60 }).accessToken;
    const api = apiFor({ transport, getAccessToken: async () => expired });
    await expect(api.getUsableModels()).rejects.toMatchObject({ code: "unauthenticated", detail: "token_expired" });
    const error = await api
      .openRun(runRequest("hi", new HandBlobs()))
      .then((run) => driveTurn(run, new HandBlobs()))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unauthenticated" });
  });

  it("an outdated client version names the setting to change", async () => {
    const api = apiFor({ transport, clientVersion: "cli-2020.01.01-0000000" });
    const error = await api.getUsableModels().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "backend_protocol", detail: "outdated_client" });
    expect((error as Error).message).toContain("CURSOR_CLIENT_VERSION");
  });

  it("serves GetUsableModels, GetDefaultModelForCli, NameAgent and GetCurrentPeriodUsage", async () => {
    const api = apiFor({ transport });
    const models = await api.getUsableModels();
    expect(models.map((m) => m.modelId)).toContain("composer-1");
    expect((await api.getDefaultModelForCli())?.modelId).toBeTruthy();
    expect(await api.nameAgent("Refactor the parser into small modules")).not.toBe("");
    const usage = await api.getCurrentPeriodUsage();
    expect(usage.$typeName).toBe("aiserver.v1.GetCurrentPeriodUsageResponse");
  });
});

describe("no fallback on a Connect error answer", () => {
  it("a stream that ends in a Connect error stays on HTTP/2 (usage limit → quota_exceeded)", async () => {
    const before = emulator.stats();
    const blobs = new HandBlobs();
    const run = await apiFor({ transport: "auto" }).openRun(runRequest("[[emu:error usage_limit]]", blobs));
    expect(run.transport).toBe("http2");
    const error = await driveTurn(run, blobs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProxyError);
    expect(error).toMatchObject({ code: "quota_exceeded", detail: "usage_limit" });
    expect(emulator.stats().runSseStreams).toBe(before.runSseStreams);
  });

  it.each([
    ["blob_not_found", { code: "backend_protocol", detail: "blob_not_found" }],
    ["internal", { code: "backend_unavailable", detail: "internal" }],
    ["outdated_client", { code: "backend_protocol", detail: "outdated_client" }],
  ] as const)("maps the emulator's scripted %s error by code and ErrorDetails", async (scripted, expected) => {
    const blobs = new HandBlobs();
    const run = await apiFor({ transport: "auto" }).openRun(runRequest(`[[emu:error ${scripted}]]`, blobs));
    await expect(driveTurn(run, blobs)).rejects.toMatchObject(expected);
  });

  it("an answer rejecting the token stays on HTTP/2 (unauthenticated)", async () => {
    const before = emulator.stats();
    const expired = emulator.issueTokens({ expiresInSeconds: -60 }).accessToken;
    const run = await apiFor({ transport: "auto", getAccessToken: async () => expired }).openRun(
      runRequest("hi", new HandBlobs()),
    );
    expect(run.transport).toBe("http2");
    await expect(driveTurn(run, new HandBlobs())).rejects.toMatchObject({ code: "unauthenticated" });
    expect(emulator.stats().runSseStreams).toBe(before.runSseStreams);
  });
});

describe("HTTP/1.1 fallback behind an HTTP/1.1-only proxy", () => {
  it("falls back automatically when HTTP/2 fails before any output, and keeps seqnos in order", async () => {
    const proxy = await startH1Proxy(emulator.url, "2");
    try {
      const api = apiFor({ agentUrl: proxy.url, apiUrl: proxy.url, transport: "auto" });
      const blobs = new HandBlobs();
      const run = await api.openRun(runRequest("through the proxy", blobs));
      expect(run.transport).toBe("http1");
      // Concurrent sends while the turn runs: heartbeats are harmless and must keep their seqno order.
      const heartbeats = Array.from({ length: 8 }, () =>
        run.send({
          $typeName: "agent.v1.AgentClientMessage",
          message: { case: "clientHeartbeat", value: { $typeName: "agent.v1.ClientHeartbeat" } },
        }),
      );
      const [result] = await Promise.all([driveTurn(run, blobs), Promise.all(heartbeats)]);
      expect(result.text).toContain("You said: through the proxy");
      const mine = proxy.appends.filter((a) => a.requestId?.requestId === run.requestId);
      expect(mine.map((a) => a.appendSeqno)).toEqual(mine.map((_, i) => BigInt(i)));
      expect(mine.length).toBeGreaterThan(8);
      expect(proxy.paths).toContain("/agent.v1.AgentService/RunSSE");
      // Unary calls take the same fallback (and the remembered choice).
      expect((await api.getUsableModels()).length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it("forced http2 does not fall back", async () => {
    const proxy = await startH1Proxy(emulator.url, "2");
    try {
      const api = apiFor({ agentUrl: proxy.url, apiUrl: proxy.url, transport: "http2" });
      await expect(api.openRun(runRequest("x", new HandBlobs()))).rejects.toMatchObject({
        code: "backend_unavailable",
        retryable: true,
      });
      expect(proxy.paths).not.toContain("/agent.v1.AgentService/RunSSE");
    } finally {
      await proxy.close();
    }
  });
});

describe("connection failures", () => {
  it("a refused connection is backend_unavailable and retryable on both transports", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    for (const transport of ["auto", "http1"] as const) {
      const api = apiFor({ agentUrl: url, apiUrl: url, transport });
      await expect(api.openRun(runRequest("x", new HandBlobs()))).rejects.toMatchObject({
        code: "backend_unavailable",
        retryable: true,
      });
      await expect(api.nameAgent("x")).rejects.toMatchObject({ code: "backend_unavailable" });
    }
  });
});
