/**
 * OpenRunOptions `onRequestSent` (src/protocol/cursor/run-opening.ts): an HTTP/2 Run is handed to the caller once its
 * request has left and before Cursor answers, so the turn can be ready to read it when the answer comes; the Run it
 * is handed is the one openRun resolves with, and a Run whose open stopped first is never handed out.
 */
import { createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentClientMessageSchema } from "../../src/gen/agent/v1/agent_pb.js";
import { type CursorApi, createCursorApi, type RunStream } from "../../src/protocol/cursor/cursor-api.js";

const first = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An h2c server that holds every stream unanswered; the streams it saw. */
async function silentServer(): Promise<{ url: string; streams: ServerHttp2Stream[] }> {
  const server: Http2Server = createServer();
  const streams: ServerHttp2Stream[] = [];
  server.on("stream", (stream) => {
    streams.push(stream);
    stream.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, streams };
}

function apiFor(agentUrl: string): CursorApi {
  const api = createCursorApi({
    agentUrl,
    apiUrl: agentUrl,
    getAccessToken: async () => "token-1",
    clientVersion: "cli-2026.01.17-d239e66",
    transport: "http2",
  });
  cleanups.push(() => api.close());
  return api;
}

describe("openRun's onRequestSent", () => {
  it("hands out the HTTP/2 Run before Cursor answers it, and resolves with that Run once it does", async () => {
    const server = await silentServer();
    const sent: RunStream[] = [];
    let opened: RunStream | undefined;
    const opening = apiFor(server.url)
      .openRun(first, { deadlineMs: 60_000, onRequestSent: (stream) => sent.push(stream) })
      .then((stream) => {
        opened = stream;
        return stream;
      });
    await vi.waitFor(() => expect(server.streams).toHaveLength(1));
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(opened).toBeUndefined();
    server.streams[0]?.respond({ ":status": 200, "content-type": "application/connect+proto" });
    expect(await opening).toBe(sent[0]);
    expect(sent).toHaveLength(1);
  });

  it("without a deadline or a signal too", async () => {
    const server = await silentServer();
    const sent: RunStream[] = [];
    const opening = apiFor(server.url).openRun(first, { onRequestSent: (stream) => sent.push(stream) });
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    await vi.waitFor(() => expect(server.streams).toHaveLength(1));
    server.streams[0]?.respond({ ":status": 200, "content-type": "application/connect+proto" });
    expect(await opening).toBe(sent[0]);
  });

  it("with a caller's signal and no deadline too", async () => {
    const server = await silentServer();
    const caller = new AbortController();
    const sent: RunStream[] = [];
    const opening = apiFor(server.url).openRun(first, {
      signal: caller.signal,
      onRequestSent: (stream) => sent.push(stream),
    });
    await vi.waitFor(() => expect(server.streams).toHaveLength(1));
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    server.streams[0]?.respond({ ":status": 200, "content-type": "application/connect+proto" });
    expect(await opening).toBe(sent[0]);
  });

  it.each([
    ["a deadline", { deadlineMs: 60_000 }],
    ["neither a deadline nor a signal", {}],
  ])("fails the open with what the callback throws, with %s, instead of throwing it uncaught", async (_, extra) => {
    const server = await silentServer();
    const opening = apiFor(server.url).openRun(first, {
      ...extra,
      onRequestSent: () => {
        throw new Error("the caller's start failed");
      },
    });
    await expect(opening).rejects.toMatchObject({ code: "internal", message: "the caller's start failed" });
  });

  it("never hands out a Run whose open the caller stopped before its request left", async () => {
    const server = await silentServer();
    const caller = new AbortController();
    const sent: RunStream[] = [];
    const opening = apiFor(server.url).openRun(first, {
      signal: caller.signal,
      deadlineMs: 60_000,
      onRequestSent: (stream) => sent.push(stream),
    });
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(0);
  });
});
