import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { deferredAgentClient } from "./deferred-client.js";
import type { AgentClient, AgentTurn, BackendEvent, ModelInfo, TurnRequest } from "./types.js";

const request = (conversationId: string): TurnRequest => ({
  model: "m",
  conversationId,
  messages: [{ role: "user", content: "hi" }],
  tools: [],
});

/** A real-client stand-in that records what it was asked. */
function fakeClient() {
  const started: TurnRequest[] = [];
  const closed: Array<string | undefined> = [];
  const turns: AgentTurn[] = [];
  const client: AgentClient = {
    startTurn(req) {
      started.push(req);
      const turn: AgentTurn = {
        conversationId: req.conversationId,
        runId: "run-1",
        status: "streaming",
        pendingToolCallIds: ["call-1"],
        routedModel: "routed",
        async *stream(): AsyncIterable<BackendEvent> {
          yield { type: "text-delta", text: `to ${req.conversationId}` };
        },
        async *resume(results): AsyncIterable<BackendEvent> {
          yield { type: "text-delta", text: `resumed with ${results.length}` };
        },
        async close(reason) {
          closed.push(reason);
        },
      };
      turns.push(turn);
      return turn;
    },
    listModels: async () => [{ id: "m" } as ModelInfo],
  };
  return { client, started, closed, turns };
}

async function collect(events: AsyncIterable<BackendEvent>): Promise<BackendEvent[]> {
  const all: BackendEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe("deferredAgentClient", () => {
  it("holds a turn started before the client is ready and runs it on the client once it is", async () => {
    const real = fakeClient();
    let ready!: (client: AgentClient) => void;
    const deferred = deferredAgentClient(new Promise((resolve) => (ready = resolve)));
    const turn = deferred.startTurn(request("c1"));
    expect(turn.conversationId).toBe("c1");
    expect(turn.status).toBe("new");
    expect(turn.pendingToolCallIds).toEqual([]);
    const events = collect(turn.stream());
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(real.started).toEqual([]);
    ready(real.client);
    expect(await events).toEqual([{ type: "text-delta", text: "to c1" }]);
    // The wrapper now reads through to the real turn.
    expect(turn.status).toBe("streaming");
    expect(turn.runId).toBe("run-1");
    expect(turn.pendingToolCallIds).toEqual(["call-1"]);
    expect(turn.routedModel).toBe("routed");
    expect(await collect(turn.resume([]))).toEqual([{ type: "text-delta", text: "resumed with 0" }]);
    await turn.close("done");
    expect(real.closed).toEqual(["done"]);
  });

  it("hands turns and model lists straight to the client once it is ready", async () => {
    const real = fakeClient();
    const deferred = deferredAgentClient(Promise.resolve(real.client));
    expect(await deferred.listModels()).toEqual([{ id: "m" }]);
    const turn = deferred.startTurn(request("c2"));
    expect(turn).toBe(real.turns[0]);
  });

  it("closes the real turn when the waiting one was closed meanwhile", async () => {
    const real = fakeClient();
    let ready!: (client: AgentClient) => void;
    const deferred = deferredAgentClient(new Promise((resolve) => (ready = resolve)));
    const turn = deferred.startTurn(request("c3"));
    await turn.close("client left");
    expect(turn.status).toBe("ended");
    const events = collect(turn.stream());
    ready(real.client);
    await events;
    expect(real.closed).toEqual(["client left"]);
  });

  it("fails a waiting turn and the model list with the client's error when it cannot be built", async () => {
    const failure = new ProxyError("backend_unavailable", "no upstream");
    const deferred = deferredAgentClient(Promise.reject(failure));
    const turn = deferred.startTurn(request("c4"));
    await expect(collect(turn.stream())).rejects.toBe(failure);
    await expect(deferred.listModels()).rejects.toBe(failure);
  });
});
