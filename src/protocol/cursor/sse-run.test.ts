/**
 * The HTTP/1.1 RunSSE + BidiAppend path against an injected fetch (no sockets): framing in adversarial chunkings,
 * end-of-stream errors with ErrorDetails, seqno order under concurrent sends, and teardown.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
  AgentServerMessageSchema,
} from "../../gen/agent/v1/agent_pb.js";
import { BidiAppendRequestSchema, BidiRequestIdSchema } from "../../gen/aiserver/v1/bidi_pb.js";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../../gen/aiserver/v1/error_pb.js";
import { ProxyError } from "../../util/errors.js";
import { createEnvelopeReader, encodeEndStream, encodeEnvelope } from "../connect/envelope.js";
import { type CursorApi, createCursorApi } from "./cursor-api.js";

const heartbeat = (): AgentClientMessage =>
  create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
const text = (value: string): AgentServerMessage =>
  create(AgentServerMessageSchema, {
    message: { case: "interactionUpdate", value: { message: { case: "textDelta", value: { text: value } } } },
  });
const frame = (message: AgentServerMessage) => encodeEnvelope(0, toBinary(AgentServerMessageSchema, message));
const concat = (parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

interface FakeServer {
  fetch: typeof fetch;
  appends: { seqno: bigint; requestId: string; message: AgentClientMessage; headers: Headers }[];
  runSse: { requestId: string; headers: Headers; signal: AbortSignal | undefined }[];
}

/** A fetch answering RunSSE with `body` split into `chunks`, and BidiAppend with `{}` after `appendDelay` ticks. */
function fakeServer(options: {
  body: Uint8Array;
  chunkSize?: number;
  status?: number;
  holdOpen?: boolean;
  /** BidiAppend never answers (until its request is aborted). */
  appendsHang?: boolean;
  /** The RunSSE body starts only once this settles. */
  bodyAfter?: Promise<void>;
}): FakeServer {
  const server: FakeServer = { appends: [], runSse: [], fetch: undefined as unknown as typeof fetch };
  server.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const headers = new Headers(init?.headers);
    const body = new Uint8Array((init?.body ?? new Uint8Array()) as Uint8Array);
    if (url.endsWith("/aiserver.v1.BidiService/BidiAppend")) {
      const request = fromBinary(BidiAppendRequestSchema, body);
      if (options.appendsHang === true) {
        await new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
      }
      // Random small delays so that a client which did not serialise its appends would reorder them.
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
      server.appends.push({
        seqno: request.appendSeqno,
        requestId: request.requestId?.requestId ?? "",
        message: fromBinary(AgentClientMessageSchema, Buffer.from(request.data, "hex")),
        headers,
      });
      return new Response(new Uint8Array(), { status: 200, headers: { "content-type": "application/proto" } });
    }
    const [envelope] = createEnvelopeReader().push(body);
    server.runSse.push({
      requestId: fromBinary(BidiRequestIdSchema, envelope?.data ?? new Uint8Array()).requestId,
      headers,
      signal: init?.signal ?? undefined,
    });
    const size = options.chunkSize ?? options.body.length;
    const signal = init?.signal ?? undefined;
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        await options.bodyAfter;
        for (let i = 0; i < options.body.length; i += size) controller.enqueue(options.body.slice(i, i + size));
        if (options.holdOpen !== true) controller.close();
        signal?.addEventListener("abort", () => controller.error(signal.reason));
      },
    });
    return new Response(stream, {
      status: options.status ?? 200,
      headers: { "content-type": "application/connect+proto" },
    });
  }) as typeof fetch;
  return server;
}

function api(server: FakeServer): CursorApi {
  let n = 0;
  return createCursorApi({
    agentUrl: "http://cursor.test",
    apiUrl: "http://cursor.test",
    getAccessToken: async () => "test-token",
    clientVersion: "cli-2026.01.17-d239e66",
    transport: "http1",
    fetch: server.fetch,
    newRequestId: () => `req-${++n}`,
  });
}

/** Text of every text delta in the stream. */
async function collect(stream: AsyncIterable<AgentServerMessage>): Promise<string[]> {
  const out: string[] = [];
  for await (const m of stream) {
    if (m.message.case === "interactionUpdate" && m.message.value.message.case === "textDelta") {
      out.push(m.message.value.message.value.text);
    }
  }
  return out;
}

describe("RunSSE + BidiAppend (§4.3) over an injected fetch", () => {
  const body = concat([frame(text("a")), frame(text("bc")), frame(text("")), encodeEndStream()]);

  it.each([1, 3, 7, body.length])("reads frames delivered in %i-byte chunks", async (chunkSize) => {
    const server = fakeServer({ body, chunkSize });
    const run = await api(server).openRun(heartbeat());
    expect(run.transport).toBe("http1");
    expect(await collect(run.messages())).toEqual(["a", "bc", ""]);
  });

  it("sends the §2.1 headers, x-cursor-streaming, and the request id in header and BidiRequestId", async () => {
    const server = fakeServer({ body: frame(text("x")), holdOpen: true });
    const run = await api(server).openRun(heartbeat());
    // Sends are serialised behind the first append, so this resolves after seqno 0 reached the server.
    await run.send(heartbeat());
    run.abort();
    const [open] = server.runSse;
    expect(open?.requestId).toBe("req-1");
    expect(run.requestId).toBe("req-1");
    expect(open?.headers.get("x-request-id")).toBe("req-1");
    expect(open?.headers.get("x-cursor-streaming")).toBe("true");
    expect(open?.headers.get("authorization")).toBe("Bearer test-token");
    expect(open?.headers.get("content-type")).toBe("application/connect+proto");
    expect(open?.headers.get("connect-protocol-version")).toBe("1");
    const [first] = server.appends;
    expect(first?.seqno).toBe(0n);
    expect(first?.requestId).toBe("req-1");
    expect(first?.headers.get("x-request-id")).toBe("req-1");
    expect(first?.headers.get("content-type")).toBe("application/proto");
  });

  it("keeps append_seqno in order under concurrent sends and counts bytes", async () => {
    const server = fakeServer({ body: frame(text("x")), holdOpen: true });
    const run = await api(server).openRun(heartbeat());
    const messages = Array.from({ length: 20 }, (_, i) =>
      create(AgentClientMessageSchema, {
        message: { case: "kvClientMessage", value: { id: i + 1, message: { case: "setBlobResult", value: {} } } },
      }),
    );
    await Promise.all(messages.map((m) => run.send(m)));
    expect(server.appends.map((a) => a.seqno)).toEqual(Array.from({ length: 21 }, (_, i) => BigInt(i)));
    expect(server.appends.slice(1).map((a) => (a.message.message.value as { id: number }).id)).toEqual(
      messages.map((_, i) => i + 1),
    );
    const expectedBytes = [heartbeat(), ...messages].reduce(
      (n, m) => n + toBinary(AgentClientMessageSchema, m).length,
      0,
    );
    expect(run.bytesSent).toBe(expectedBytes);
    run.abort();
  });

  it("an append still on its way when the server ends the Run cleanly succeeds; a send after the end is refused", async () => {
    // The server may finish the turn on a tool result without waiting for the stream_close sent after it.
    let release = () => {};
    const bodyAfter = new Promise<void>((resolve) => (release = resolve));
    const run = await api(fakeServer({ body, appendsHang: true, bodyAfter })).openRun(heartbeat());
    const inFlight = run.send(heartbeat());
    release();
    expect(await collect(run.messages())).toEqual(["a", "bc", ""]);
    await expect(inFlight).resolves.toBeUndefined();
    await expect(run.send(heartbeat())).rejects.toMatchObject({ detail: "stream_closed" });
  });

  it("throws the end-of-stream error mapped by its ErrorDetails", async () => {
    const details = Buffer.from(
      toBinary(ErrorDetailsSchema, create(ErrorDetailsSchema, { error: ErrorDetails_Error.PRO_USER_USAGE_LIMIT })),
    )
      .toString("base64")
      .replace(/=+$/, "");
    const errorBody = concat([
      frame(text("partial")),
      encodeEndStream({
        error: {
          code: "resource_exhausted",
          message: "limit",
          details: [{ type: "aiserver.v1.ErrorDetails", value: details }],
        },
        metadata: {},
      }),
    ]);
    const run = await api(fakeServer({ body: errorBody, chunkSize: 2 })).openRun(heartbeat());
    const seen: string[] = [];
    const error = await (async () => {
      for await (const m of run.messages()) seen.push(m.message.case ?? "");
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["interactionUpdate"]);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe("quota_exceeded");
    await expect(run.send(heartbeat())).rejects.toMatchObject({ code: "quota_exceeded" });
  });

  it("treats a body that stops without the end-of-stream frame as a dropped connection", async () => {
    const run = await api(fakeServer({ body: frame(text("a")) })).openRun(heartbeat());
    await expect(collect(run.messages())).rejects.toMatchObject({ code: "backend_unavailable", retryable: true });
  });

  it("treats a truncated frame as a protocol error", async () => {
    const truncated = frame(text("abc")).slice(0, -1);
    const run = await api(fakeServer({ body: truncated })).openRun(heartbeat());
    await expect(collect(run.messages())).rejects.toMatchObject({ code: "backend_protocol" });
  });

  it("maps a non-200 answer with a Connect JSON error body", async () => {
    const json = new TextEncoder().encode(JSON.stringify({ code: "unauthenticated", message: "expired" }));
    const run = await api(fakeServer({ body: json, status: 401 })).openRun(heartbeat());
    await expect(collect(run.messages())).rejects.toMatchObject({ code: "unauthenticated" });
  });

  it("abort mid-stream ends messages() with canceled, aborts the fetch, and refuses sends", async () => {
    const server = fakeServer({ body: frame(text("first")), holdOpen: true });
    const run = await api(server).openRun(heartbeat());
    const iterator = run.messages()[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    const pending = iterator.next();
    run.abort();
    run.abort();
    await expect(pending).rejects.toMatchObject({ code: "canceled" });
    expect(server.runSse[0]?.signal?.aborted).toBe(true);
    await expect(run.send(heartbeat())).rejects.toBeInstanceOf(ProxyError);
  });

  it("a caller's AbortSignal before openRun rejects with canceled", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(api(fakeServer({ body })).openRun(heartbeat(), { signal: controller.signal })).rejects.toMatchObject({
      code: "canceled",
    });
  });
});
