/**
 * The emulator's turn channel keeps one abort listener for all pending KV waits: a listener per `get_blob_args` made
 * every new wait scan all earlier ones (Node's EventTarget checks for duplicates), quadratic in a long history.
 */
import { getEventListeners } from "node:events";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import { silentLogger } from "../util/logger.js";
import { type InboundMessage, TurnChannel } from "./turn-channel.js";

function idleInbound(): AsyncIterable<InboundMessage> {
  return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<InboundMessage>>(() => {}) }) };
}

describe("TurnChannel KV waits", () => {
  it("thousands of pending blob requests share one abort listener, and all fail when the turn aborts", async () => {
    const channel = new TurnChannel({
      inbound: idleInbound(),
      clientSignal: new AbortController().signal,
      heartbeatIntervalMs: 60_000,
      firstMessageTimeoutMs: 60_000,
      logger: silentLogger,
      onInboundBytes: () => {},
    });
    const before = getEventListeners(channel.signal, "abort").length;
    const waits = Array.from({ length: 5_000 }, (_, i) => channel.getBlob(new Uint8Array([i % 256])));
    expect(getEventListeners(channel.signal, "abort").length).toBe(before);
    channel.dispose();
    const outcomes = await Promise.allSettled(waits);
    expect(outcomes.every((o) => o.status === "rejected")).toBe(true);
    // A wait started after the turn ended fails at once instead of hanging.
    await expect(channel.getBlob(new Uint8Array([1]))).rejects.toBeDefined();
  });
});

describe("TurnChannel interaction queries", () => {
  it("rejects an interaction_response to a query it never sent, and resolves one it did", async () => {
    const inbound: InboundMessage[] = [];
    let push: (() => void) | undefined;
    const source: AsyncIterable<InboundMessage> = {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const next = inbound.shift();
          if (next !== undefined) yield next;
          else await new Promise<void>((resolve) => (push = resolve));
        }
      },
    };
    const deliver = (init: Parameters<typeof create<typeof AgentClientMessageSchema>>[1]) => {
      inbound.push({ message: create(AgentClientMessageSchema, init), size: 1 });
      push?.();
    };
    const channel = new TurnChannel({
      inbound: source,
      clientSignal: new AbortController().signal,
      heartbeatIntervalMs: 60_000,
      firstMessageTimeoutMs: 60_000,
      logger: silentLogger,
      onInboundBytes: () => {},
    });
    deliver({ message: { case: "runRequest", value: {} } });
    await channel.runRequest;
    const asked = channel.ask({ case: "webSearchRequestQuery", value: { args: { searchTerm: "q" } } });
    deliver({
      message: {
        case: "interactionResponse",
        value: {
          id: 1,
          result: { case: "webSearchRequestResponse", value: { result: { case: "approved", value: {} } } },
        },
      },
    });
    expect((await asked).result.case).toBe("webSearchRequestResponse");
    deliver({ message: { case: "interactionResponse", value: { id: 42 } } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(channel.signal.aborted).toBe(true);
    expect(String(channel.signal.reason)).toMatch(/no such interaction_query is open/);
    channel.dispose();
  });
});
