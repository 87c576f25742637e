/**
 * Transport recovery in `auto` mode, against the emulator behind a fault-injecting front: an HTTP/2 connection that
 * fails makes only that call fall back to HTTP/1.1; the next call tries HTTP/2 again; only repeated failures in a row
 * start a backoff (HTTP/1.1 directly for a while, then one HTTP/2 probe); a reset stream on a healthy HTTP/2
 * connection is that call's error, never a reason to leave HTTP/2.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { type CursorApi, type CursorApiOptions, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { type H2Front, startH2Front } from "./support/h2-front.js";
import { driveTurn, HandBlobs, runRequest } from "./support/hand-turn.js";

type Emulator = Awaited<ReturnType<typeof startEmulator>>;

let emulator: Emulator;
let accessToken: string;
let front: H2Front;
const apis: CursorApi[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  accessToken = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});
afterEach(async () => {
  for (const api of apis.splice(0)) api.close();
  await front.close();
});

async function apiBehindFront(options: Partial<CursorApiOptions> = {}): Promise<CursorApi> {
  front = await startH2Front(emulator.url);
  const api = createCursorApi({
    agentUrl: front.url,
    apiUrl: front.url,
    getAccessToken: async () => accessToken,
    clientVersion: "cli-2026.01.17-d239e66",
    transport: "auto",
    ...options,
  });
  apis.push(api);
  return api;
}

async function echo(api: CursorApi, text: string): Promise<"http1" | "http2"> {
  const blobs = new HandBlobs();
  const run = await api.openRun(runRequest(text, blobs));
  const result = await driveTurn(run, blobs);
  expect(result.text).toContain(`You said: ${text}`);
  return run.transport;
}

describe("per-request fallback", () => {
  it("falls back for the failing request only; the next request is back on HTTP/2", async () => {
    const api = await apiBehindFront();
    front.refuseConnections = 1;
    expect(await echo(api, "first")).toBe("http1");
    expect(front.refusedConnections).toBe(1);
    expect(await echo(api, "second")).toBe("http2");
    expect(await echo(api, "third")).toBe("http2");
  });

  it("unary calls fall back per call too", async () => {
    const api = await apiBehindFront();
    front.refuseConnections = 1;
    expect((await api.getUsableModels()).length).toBeGreaterThan(0);
    const h1 = front.h1Connections;
    expect(h1).toBeGreaterThan(0);
    expect(await echo(api, "after a unary fallback")).toBe("http2");
    expect(front.h1Connections).toBe(h1);
  });
});

describe("backoff after repeated failures", () => {
  it("tries HTTP/2 on every request until failures repeat, then probes it after a growing pause", async () => {
    let clock = 1_000_000;
    const api = await apiBehindFront({ now: () => clock, http2Backoff: { initialMs: 30_000, maxMs: 120_000 } });
    front.refuseConnections = Number.POSITIVE_INFINITY;
    const models = async () => expect((await api.getUsableModels()).length).toBeGreaterThan(0);

    await models();
    expect(front.h2Connections).toBe(1);
    await models(); // a second failure in a row: HTTP/2 was still tried
    expect(front.h2Connections).toBe(2);
    await models(); // now backing off: HTTP/1.1 directly
    expect(await echo(api, "during backoff")).toBe("http1");
    expect(front.h2Connections).toBe(2);

    clock += 30_000; // the pause is over: one probe, which fails and doubles the pause
    await models();
    expect(front.h2Connections).toBe(3);
    clock += 30_000;
    await models();
    expect(front.h2Connections).toBe(3);

    front.refuseConnections = 0; // HTTP/2 works again: the next probe succeeds and the failures are forgotten
    clock += 30_000;
    expect(await echo(api, "recovered")).toBe("http2");
    expect(front.h2Connections).toBe(4);
    expect(await echo(api, "still recovered")).toBe("http2");
  });

  it("does not count a failure when HTTP/1.1 fails too (the server is down, not HTTP/2)", async () => {
    const clock = 1_000_000;
    const api = await apiBehindFront({ now: () => clock });
    front.refuseConnections = 3;
    front.refuseHttp1Connections = 3;
    for (let i = 0; i < 3; i++) {
      await expect(api.getUsableModels()).rejects.toMatchObject({ code: "backend_unavailable" });
    }
    expect(front.refusedConnections).toBe(3);
    // The server is back on both protocols: HTTP/2 is tried and used at once.
    expect(await echo(api, "server is back")).toBe("http2");
    expect(front.h2Connections).toBe(4);
  });
});

describe("stream-level errors", () => {
  it("a reset stream on a working HTTP/2 connection fails that call without falling back or backing off", async () => {
    const api = await apiBehindFront();
    expect(await echo(api, "warm")).toBe("http2");
    const runSse = emulator.stats().runSseStreams;
    front.resetStreams = 3;
    for (let i = 0; i < 3; i++) {
      await expect(api.openRun(runRequest("reset me", new HandBlobs()))).rejects.toMatchObject({
        code: "backend_unavailable",
        retryable: true,
      });
    }
    expect(front.resetStreamCount).toBe(3);
    expect(front.h1Connections).toBe(0);
    expect(emulator.stats().runSseStreams).toBe(runSse);
    expect(await echo(api, "next")).toBe("http2");
  });

  it("a reset unary stream is that call's error, and the next unary call stays on HTTP/2", async () => {
    const api = await apiBehindFront();
    front.resetStreams = 1;
    await expect(api.getUsableModels()).rejects.toMatchObject({ code: "backend_unavailable", retryable: true });
    expect((await api.getUsableModels()).length).toBeGreaterThan(0);
    expect(front.h1Connections).toBe(0);
  });
});
