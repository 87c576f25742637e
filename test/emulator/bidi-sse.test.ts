/**
 * The HTTP/1.1 transport (docs/protocol.md §4.3): RunSSE + BidiAppend with hex `data`, request ids from the body
 * and `x-request-id`, strict `append_seqno` order, and appends buffered before RunSSE opens.
 */
import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { AgentClientMessageSchema, type AgentServerMessage } from "../../src/gen/agent/v1/agent_pb.js";
import { BidiAppendRequestSchema } from "../../src/gen/aiserver/v1/bidi_pb.js";
import { answersFor, BlobStore, cursorHeaders, runRequest, toolDefinition } from "./support/raw-client.js";
import { bidiAppend, driveSse, runSse } from "./support/sse-client.js";

let emulator: Emulator;
let token: string;
beforeAll(async () => {
  emulator = await startEmulator({ heartbeatIntervalMs: 20 });
  token = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});

describe("RunSSE + BidiAppend", () => {
  it("carries an echo turn over HTTP/1.1", async () => {
    emulator.resetStats();
    const result = await driveSse(emulator.url, token, runRequest("hello over sse"), new BlobStore());
    expect(result.error).toBeUndefined();
    expect(result.appendErrors).toEqual([]);
    expect(result.text).toBe("You said: hello over sse");
    expect(result.turnEnded).toBe(true);
    const stats = emulator.stats();
    expect(stats.runSseStreams).toBe(1);
    expect(stats.runStreams).toBe(0);
    expect(stats.bidiAppends).toBeGreaterThanOrEqual(3);
    expect(stats.turns[0]).toMatchObject({ transport: "http1", action: "user_message", outcome: "completed" });
    expect(stats.turns[0]?.requestBytes).toBeGreaterThan(0);
  });

  it("carries a client tool round trip", async () => {
    const result = await driveSse(emulator.url, token, runRequest('[[emu:tool lookup {"q":1}]]'), new BlobStore(), {
      tools: [toolDefinition("lookup")],
      onExec: (exec) => ({
        case: "execClientMessage",
        value: {
          id: exec.id,
          execId: exec.execId,
          message: {
            case: "mcpResult",
            value: {
              result: { case: "success", value: { content: [{ content: { case: "text", value: { text: "one" } } }] } },
            },
          },
        },
      }),
    });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe("lookup returned: one");
  });

  it("a seqno gap or repeat is an error", async () => {
    const requestId = randomUUID();
    const first = await bidiAppend(emulator.url, token, requestId, 0, runRequest("hi"));
    expect(first.status).toBe(200);
    const heartbeat = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
    const repeat = await bidiAppend(emulator.url, token, requestId, 0, heartbeat);
    expect(repeat.code).toBe("invalid_argument");
    const gap = await bidiAppend(emulator.url, token, requestId, 2, heartbeat);
    expect(gap.code).toBe("invalid_argument");
    expect((await bidiAppend(emulator.url, token, requestId, 1, heartbeat)).status).toBe(200);
  });

  it("appends sent before RunSSE opens are buffered and replayed in order", async () => {
    const requestId = randomUUID();
    const store = new BlobStore();
    expect((await bidiAppend(emulator.url, token, requestId, 0, runRequest("buffered first"))).status).toBe(200);
    const heartbeat = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
    expect((await bidiAppend(emulator.url, token, requestId, 1, heartbeat)).status).toBe(200);
    let seqno = 2;
    let text = "";
    let ended = false;
    for await (const m of runSse(emulator.url, token, requestId)) {
      if (m.message.case === "interactionUpdate") {
        const u = m.message.value.message;
        if (u.case === "textDelta") text += u.value.text;
        if (u.case === "turnEnded") ended = true;
      }
      for (const answer of answersFor(m as AgentServerMessage, store, {})) {
        const result = await bidiAppend(
          emulator.url,
          token,
          requestId,
          seqno++,
          create(AgentClientMessageSchema, answer),
        );
        expect(result.status).toBe(200);
      }
    }
    expect(text).toBe("You said: buffered first");
    expect(ended).toBe(true);
  });

  it("a second RunSSE for an open request id is already_exists; mismatched ids and non-hex data are invalid", async () => {
    const requestId = randomUUID();
    await bidiAppend(emulator.url, token, requestId, 0, runRequest("[[emu:stall 0]]"));
    const controller = new AbortController();
    const open = (async () => {
      try {
        for await (const _ of runSse(emulator.url, token, requestId, controller.signal)) void _;
      } catch {
        // aborted below
      }
    })();
    await expect
      .poll(() => emulator.stats().turns.some((t) => t.action === "user_message" && t.outcome === undefined))
      .toBe(true);
    const second = runSse(emulator.url, token, requestId);
    await expect(second.next()).rejects.toMatchObject({ code: Code.AlreadyExists });
    controller.abort();
    await open;

    const body = toBinary(
      BidiAppendRequestSchema,
      create(BidiAppendRequestSchema, { data: "zz", requestId: { requestId: "a" }, appendSeqno: 0n }),
    );
    const post = (headers: Record<string, string>) =>
      fetch(`${emulator.url}/aiserver.v1.BidiService/BidiAppend`, {
        method: "POST",
        headers: {
          ...cursorHeaders(token),
          "content-type": "application/proto",
          "connect-protocol-version": "1",
          ...headers,
        },
        body,
      });
    const mismatch = await post({ "x-request-id": "b" });
    expect(((await mismatch.json()) as { code: string }).code).toBe("invalid_argument");
    const notHex = await post({});
    expect(((await notHex.json()) as { code: string; message: string }).message).toMatch(/not hex/);
  });

  it("scripted errors arrive in the RunSSE end-stream frame", async () => {
    const result = await driveSse(emulator.url, token, runRequest("[[emu:error usage_limit]]"), new BlobStore());
    expect(result.error?.code).toBe(Code.ResourceExhausted);
  });
});
