/**
 * The hand-framed HTTP/2 `Run` (src/protocol/h2-run.ts) against a raw h2c server that answers what the emulator never
 * does: the request it sends (headers, Connect envelopes), a body that stops without the end-of-stream frame, a
 * non-200 status, a wrong content type, and an end-of-stream error whose retry hint is in the response headers.
 */
import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { AgentClientMessageSchema, AgentServerMessageSchema } from "../../src/gen/agent/v1/agent_pb.js";
import { encodeEndStream, encodeEnvelope } from "../../src/protocol/connect/envelope.js";
import { type CursorApi, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";

type Handler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

let server: Http2Server | undefined;
let api: CursorApi | undefined;

afterEach(async () => {
  api?.close();
  api = undefined;
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function apiAgainst(handler: Handler, maxMessageBytes?: number): Promise<CursorApi> {
  server = createServer();
  server.on("stream", handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  api = createCursorApi({
    agentUrl: `http://127.0.0.1:${port}`,
    apiUrl: `http://127.0.0.1:${port}`,
    getAccessToken: async () => "token-1",
    clientVersion: "cli-2026.01.17-d239e66",
    transport: "http2",
    newRequestId: () => "req-1",
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
  });
  return api;
}

const first = create(AgentClientMessageSchema, {
  message: { case: "clientHeartbeat", value: {} },
});

const textDelta = (text: string) =>
  encodeEnvelope(
    0,
    toBinary(
      AgentServerMessageSchema,
      create(AgentServerMessageSchema, {
        message: {
          case: "interactionUpdate",
          value: { message: { case: "textDelta", value: { text } } },
        },
      }),
    ),
  );

const connectResponse = { ":status": 200, "content-type": "application/connect+proto" };

async function readAll(api: CursorApi): Promise<{ texts: string[]; error: unknown }> {
  const run = await api.openRun(first);
  const texts: string[] = [];
  try {
    for await (const message of run.messages()) {
      const update = message.message;
      if (update.case === "interactionUpdate" && update.value.message.case === "textDelta") {
        texts.push(update.value.message.value.text);
      }
    }
    return { texts, error: undefined };
  } catch (error) {
    return { texts, error };
  }
}

describe("hand-framed HTTP/2 Run", () => {
  it("sends the Connect streaming request and decodes frames split across DATA chunks", async () => {
    let seen: IncomingHttpHeaders | undefined;
    const received: Buffer[] = [];
    const api = await apiAgainst((stream, headers) => {
      seen = headers;
      stream.on("data", (chunk: Buffer) => {
        received.push(chunk);
        if (received.length > 1) return;
        stream.respond(connectResponse);
        const bytes = Buffer.concat([Buffer.from(textDelta("hel")), Buffer.from(textDelta("lo"))]);
        // One frame split in two writes, the next one whole with the end-of-stream frame.
        stream.write(bytes.subarray(0, 3));
        stream.write(bytes.subarray(3));
        stream.end(Buffer.from(encodeEndStream()));
      });
    });
    const result = await readAll(api);
    expect(result).toEqual({ texts: ["hel", "lo"], error: undefined });
    expect(seen).toMatchObject({
      ":method": "POST",
      ":path": "/agent.v1.AgentService/Run",
      "content-type": "application/connect+proto",
      "connect-protocol-version": "1",
      authorization: "Bearer token-1",
      "x-cursor-client-type": "cli",
      "x-request-id": "req-1",
    });
    const body = Buffer.concat(received);
    expect(body[0]).toBe(0);
    const length = body.readUInt32BE(1);
    expect(fromBinary(AgentClientMessageSchema, body.subarray(5, 5 + length)).message.case).toBe("clientHeartbeat");
  });

  it("opens the Run under each agent URL's own path prefix, one API after another", async () => {
    const paths: string[] = [];
    server = createServer();
    server.on("stream", (stream, headers) => {
      paths.push(String(headers[":path"]));
      stream.respond(connectResponse);
      stream.end(Buffer.from(encodeEndStream()));
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    for (const agentUrl of [
      `http://127.0.0.1:${port}/edge/v2`,
      `http://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}/edge/v2/`,
    ]) {
      api = createCursorApi({
        agentUrl,
        apiUrl: `http://127.0.0.1:${port}`,
        getAccessToken: async () => "token-1",
        clientVersion: "cli-2026.01.17-d239e66",
        transport: "http2",
        newRequestId: () => "req-1",
      });
      for (let i = 0; i < 2; i++) expect(await readAll(api)).toEqual({ texts: [], error: undefined });
      api.close();
      api = undefined;
    }
    expect(paths).toEqual([
      "/edge/v2/agent.v1.AgentService/Run",
      "/edge/v2/agent.v1.AgentService/Run",
      "/agent.v1.AgentService/Run",
      "/agent.v1.AgentService/Run",
      "/edge/v2/agent.v1.AgentService/Run",
      "/edge/v2/agent.v1.AgentService/Run",
    ]);
  });

  it("a first message over the message limit ends the run at once with a 413, instead of a server waiting for it", async () => {
    let streams = 0;
    // Like Cursor (and the emulator), the server answers nothing until the run request arrives.
    const api = await apiAgainst(() => {
      streams += 1;
    }, 64);
    const big = create(AgentClientMessageSchema, {
      message: { case: "runRequest", value: { conversationId: "x".repeat(200) } },
    });
    const error = await api.openRun(big).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: "request_too_large", status: 413, detail: "message_too_large" });
    expect((error as Error).message).toContain("over HTTP/2");
    expect(streams).toBeLessThanOrEqual(1);
  });

  it("a body that stops without the end-of-stream frame is a retryable connection loss", async () => {
    const api = await apiAgainst((stream) => {
      stream.respond(connectResponse);
      stream.end(Buffer.from(textDelta("partial")));
    });
    const result = await readAll(api);
    expect(result.texts).toEqual(["partial"]);
    expect(result.error).toMatchObject({ code: "backend_unavailable", detail: "missing_end_stream", retryable: true });
  });

  it("maps a non-200 answer by its status and a wrong content type as a protocol failure", async () => {
    const api = await apiAgainst((stream, headers) => {
      if (headers["x-request-id"] === "req-1" && stream.id === 1) stream.respond({ ":status": 503 });
      else stream.respond({ ":status": 200, "content-type": "text/html" });
      stream.end();
    });
    expect((await readAll(api)).error).toMatchObject({ code: "backend_unavailable", detail: "unavailable" });
    expect((await readAll(api)).error).toMatchObject({ code: "backend_unavailable", detail: "internal" });
  });

  it("an end-of-stream error takes its retry hint from the response headers", async () => {
    const api = await apiAgainst((stream) => {
      stream.respond({ ...connectResponse, "retry-after": "7" });
      const end = { error: { code: "resource_exhausted", message: "slow down", details: [] }, metadata: {} };
      stream.end(Buffer.from(encodeEndStream(end)));
    });
    // ResourceExhausted without ErrorDetails is Cursor's usage limit (error-mapping.ts); the reset comes from headers.
    expect((await readAll(api)).error).toMatchObject({ code: "quota_exceeded", retryAfterSeconds: 7 });
  });

  it("a send still waiting on flow control when the server ends the Run cleanly succeeds; a later send is refused", async () => {
    // The server may finish a turn without reading what the client still sends (e.g. a stream_close after the last
    // tool result). Here it never reads the request body, so a 1 MB message waits for flow control.
    let endResponse = () => {};
    const api = await apiAgainst((stream) => {
      stream.respond(connectResponse);
      endResponse = () => stream.end(Buffer.concat([textDelta("done"), encodeEndStream()]));
    });
    const run = await api.openRun(first);
    const big = create(AgentClientMessageSchema, {
      message: {
        case: "kvClientMessage",
        value: { id: 1, message: { case: "getBlobResult", value: { blobData: new Uint8Array(1024 * 1024) } } },
      },
    });
    const pending = run.send(big);
    endResponse();
    const texts: string[] = [];
    for await (const message of run.messages()) {
      if (message.message.case === "interactionUpdate" && message.message.value.message.case === "textDelta") {
        texts.push(message.message.value.message.value.text);
      }
    }
    expect(texts).toEqual(["done"]);
    await expect(pending).resolves.toBeUndefined();
    await expect(run.send(first)).rejects.toMatchObject({ detail: "stream_closed" });
  });
});
