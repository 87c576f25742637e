/**
 * The HTTP/1.1 transport (docs/protocol.md §4.3): RunSSE + BidiAppend with hex `data`, request ids from the body
 * and `x-request-id`, `append_seqno` order restored from out-of-order appends (bounded), and appends buffered
 * before RunSSE opens.
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

  it("takes the appends on AgentService's BidiAppend too, as Cursor's SDK lists it there (addendum 3 X4)", async () => {
    const result = await driveSse(
      emulator.url,
      token,
      runRequest('[[emu:tool lookup {"q":1}]]'),
      new BlobStore(),
      {
        tools: [toolDefinition("lookup")],
        onExec: (exec) => ({
          case: "execClientMessage",
          value: {
            id: exec.id,
            execId: exec.execId,
            message: {
              case: "mcpResult",
              value: {
                result: {
                  case: "success",
                  value: { content: [{ content: { case: "text", value: { text: "one" } } }] },
                },
              },
            },
          },
        }),
      },
      "/agent.v1.AgentService/BidiAppend",
    );
    expect(result.error).toBeUndefined();
    expect(result.appendErrors).toEqual([]);
    expect(result.text).toBe("lookup returned: one");
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

  it("a repeated seqno is idempotent (addendum 2 §2)", async () => {
    const requestId = randomUUID();
    expect((await bidiAppend(emulator.url, token, requestId, 0, runRequest("hi"))).status).toBe(200);
    const heartbeat = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
    expect((await bidiAppend(emulator.url, token, requestId, 0, heartbeat)).status).toBe(200);
    expect((await bidiAppend(emulator.url, token, requestId, 1, heartbeat)).status).toBe(200);
    expect((await bidiAppend(emulator.url, token, requestId, 1, heartbeat)).status).toBe(200);
  });

  it("out-of-order appends are applied in seqno order and the turn completes (up to 16 in flight)", async () => {
    const requestId = randomUUID();
    const store = new BlobStore();
    const heartbeat = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
    // seqno 1 and 2 arrive before 0 (the run request).
    expect((await bidiAppend(emulator.url, token, requestId, 2, heartbeat)).status).toBe(200);
    expect((await bidiAppend(emulator.url, token, requestId, 1, heartbeat)).status).toBe(200);
    expect(
      (await bidiAppend(emulator.url, token, requestId, 0, runRequest("out of order [[emu:think 2]]"))).status,
    ).toBe(200);
    let seqno = 3;
    let text = "";
    let ended = false;
    const pending: Promise<unknown>[] = [];
    for await (const m of runSse(emulator.url, token, requestId)) {
      if (m.message.case === "interactionUpdate") {
        const u = m.message.value.message;
        if (u.case === "textDelta") text += u.value.text;
        if (u.case === "turnEnded") ended = true;
      }
      // Each answer goes out with a heartbeat numbered before it, the two sent in reverse order and concurrently.
      for (const answer of answersFor(m as AgentServerMessage, store, {})) {
        const first = seqno++;
        const second = seqno++;
        pending.push(
          bidiAppend(emulator.url, token, requestId, second, create(AgentClientMessageSchema, answer)),
          bidiAppend(emulator.url, token, requestId, first, heartbeat),
        );
      }
    }
    const results = (await Promise.all(pending)) as { status: number }[];
    expect(results.every((result) => result.status === 200)).toBe(true);
    expect(text).toBe("You said: out of order");
    expect(ended).toBe(true);
  });

  it("a gap that never fills ends the Run with a clear error after the bounded wait", async () => {
    const strict = await startEmulator({ heartbeatIntervalMs: 20, appendGapTimeoutMs: 150 });
    try {
      const bearer = strict.issueTokens().accessToken;
      const requestId = randomUUID();
      const heartbeat = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
      expect((await bidiAppend(strict.url, bearer, requestId, 0, runRequest("hi"))).status).toBe(200);
      // seqno 1 (the request-context answer) never comes; 2 is held.
      expect((await bidiAppend(strict.url, bearer, requestId, 2, heartbeat)).status).toBe(200);
      const started = Date.now();
      const error = await (async () => {
        try {
          for await (const _ of runSse(strict.url, bearer, requestId)) void _;
        } catch (thrown) {
          return thrown as { code: Code; message: string };
        }
        return undefined;
      })();
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.message).toContain("append_seqno 1 never arrived within 150 ms");
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await strict.close();
    }
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
