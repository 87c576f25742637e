/**
 * What a parked turn lets go of (docs/architecture.md, parked turns; docs/performance.md, parked memory): once a turn
 * parks on a client tool call it keeps its open Run and what it needs to resume, not the caller's request. Its history
 * (every message object and the array) and its setup callback become garbage while the turn stays parked, and so does
 * the engine's request (what a door translated the HTTP body into) while the engine holds the parked turn, and the
 * signal its Run was opened with (an AbortSignal and its listeners; its Run is ended by the session). Observed
 * with weak references and a full collection (V8's `gc`, obtained for this test only).
 */
import { getEventListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentTurn, BackendEvent, HistoryMessage, TurnRequest } from "../../src/backend/types.js";
import { createEngine } from "../../src/engine/engine.js";
import type { ConversationMessage, EngineRequest } from "../../src/engine/types.js";
import { collect, endOf, type FixtureParts, queryTool, textOf, toolCallsOf, useFixture } from "./harness.js";

const lookupTool = queryTool();

/** A full collection, without starting Node with --expose-gc (a fresh context sees `gc` while the flag is on). */
function fullCollection(): () => void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as unknown;
  setFlagsFromString("--no-expose-gc");
  if (typeof gc !== "function") throw new Error("V8 gave no gc function");
  return gc as () => void;
}

/** Collects twice after the current job (a WeakRef's target is kept alive until the job that made it ends). */
async function collectGarbage(gc: () => void): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

/**
 * Starts a turn on a request whose history is large enough to matter; returns the turn and weak references to the
 * request's parts (the request itself is not returned, so nothing but the turn can hold it).
 */
function startWithHistory(
  fx: FixtureParts,
  conversationId: string,
): {
  turn: AgentTurn;
  refs: { messages: WeakRef<HistoryMessage[]>; earlier: WeakRef<HistoryMessage>; onRunOpened: WeakRef<() => void> };
} {
  const earlier: HistoryMessage = { role: "user", content: `earlier question ${"x".repeat(64 * 1024)}` };
  const messages: HistoryMessage[] = [
    { role: "system", content: "You are a test assistant." },
    earlier,
    { role: "assistant", content: "earlier answer", toolCalls: [] },
    { role: "user", content: '[[emu:tool lookup {"q":"answer"}]]' },
  ];
  const onRunOpened = () => undefined;
  const request: TurnRequest = { model: "auto", conversationId, messages, tools: [lookupTool], onRunOpened };
  return {
    turn: fx.client.startTurn(request),
    refs: { messages: new WeakRef(messages), earlier: new WeakRef(earlier), onRunOpened: new WeakRef(onRunOpened) },
  };
}

describe.each(["http2", "http1"] as const)("a parked turn over %s", (transport) => {
  const fx = useFixture({ transport });
  let gc: () => void;
  beforeAll(() => {
    gc = fullCollection();
  });

  it("keeps none of the caller's history or setup callback, and still resumes on the same Run", async () => {
    const { turn, refs } = startWithHistory(fx, `${transport}-release`);
    const first = await collect(turn.stream());
    expect(endOf(first)).toBe("tool-calls");
    expect(turn.status).toBe("parked");
    await collectGarbage(gc);
    // The test holds the turn, so anything it still referenced would survive.
    expect(refs.messages.deref()).toBeUndefined();
    expect(refs.earlier.deref()).toBeUndefined();
    expect(refs.onRunOpened.deref()).toBeUndefined();
    const calls = toolCallsOf(first);
    const second = await collect(
      turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "42", isError: false }]),
    );
    expect(textOf(second)).toBe("lookup returned: 42");
    expect(endOf(second)).toBe("stop");
  });

  it("keeps neither its Run's first message nor the signal it was opened with, and still resumes", async () => {
    // What each Run was opened with, seen weakly (the api is the client's own object, so it calls this one): the
    // first message is the whole run request; the signal is the caller's, which the open listens on.
    const openRun = fx.api.openRun;
    const signals: WeakRef<AbortSignal>[] = [];
    const firsts: WeakRef<object>[] = [];
    fx.api.openRun = (first, options) => {
      firsts.push(new WeakRef(first));
      if (options?.signal !== undefined) signals.push(new WeakRef(options.signal));
      return openRun(first, options);
    };
    try {
      const turn = fx.client.startTurn({
        model: "auto",
        conversationId: `${transport}-signal-release`,
        messages: [{ role: "user", content: '[[emu:tool lookup {"q":"answer"}]]' }],
        tools: [lookupTool],
      });
      // The caller's signal, held by nothing here (its controller is garbage at once).
      const first = await collect(turn.stream(new AbortController().signal));
      expect(endOf(first)).toBe("tool-calls");
      expect(signals).toHaveLength(1);
      // The open left no listener on it either (its Run lives on, parked).
      expect(getEventListeners(signals[0]?.deref() as AbortSignal, "abort")).toEqual([]);
      await collectGarbage(gc);
      expect(firsts[0]?.deref()).toBeUndefined();
      expect(signals[0]?.deref()).toBeUndefined();
      const calls = toolCallsOf(first);
      const second = await collect(
        turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "42", isError: false }]),
      );
      expect(textOf(second)).toBe("lookup returned: 42");
      expect(endOf(second)).toBe("stop");
    } finally {
      fx.api.openRun = openRun;
    }
  });

  it("held by the engine, keeps none of the engine request, and the answer resumes it", async () => {
    const engine = createEngine({ agentClient: fx.client });
    const { events, refs } = await startEngineTurn(engine, `${transport}-engine-release`);
    const first = await collect(events);
    expect(endOf(first)).toBe("tool-calls");
    expect(engine.parkedCount()).toBe(1);
    await collectGarbage(gc);
    expect(refs.request.deref()).toBeUndefined();
    expect(refs.messages.deref()).toBeUndefined();
    expect(refs.earlier.deref()).toBeUndefined();
    const callId = toolCallsOf(first)[0]?.toolCallId ?? "";
    const answer = await engine.startTurn(
      {
        // The whole history again, as a client sends it (a copy: the originals must stay collectable).
        ...engineRequest([
          ...historyOf(`${transport}-engine-release`),
          {
            role: "assistant",
            text: "",
            reasoning: [],
            toolCalls: [{ id: callId, name: "lookup", arguments: '{"q":"answer"}' }],
          },
          { role: "tool", toolCallId: callId, content: "42", isError: false },
        ]),
      },
      new AbortController().signal,
    );
    expect(answer.route).toBe("resumed");
    expect(textOf(await collect(answer.events))).toBe("lookup returned: 42");
    await engine.closeAll();
  });
});

function engineRequest(messages: ConversationMessage[]): EngineRequest {
  return {
    model: "auto",
    instructions: ["You are a test assistant."],
    messages,
    tools: [lookupTool],
    options: { reasoning: false, reasoningEffort: undefined, toolChoice: "auto" },
  };
}

/** A history with a large earlier message, ending with the message that calls `lookup`; new objects every call. */
function historyOf(tag: string): ConversationMessage[] {
  return [
    { role: "user", parts: [{ type: "text", text: `${tag}: earlier question ${"x".repeat(64 * 1024)}` }] },
    { role: "assistant", text: "earlier answer", reasoning: [], toolCalls: [] },
    { role: "user", parts: [{ type: "text", text: '[[emu:tool lookup {"q":"answer"}]]' }] },
  ];
}

/** Starts an engine turn on a request with a large earlier message; returns its events and weak references only. */
async function startEngineTurn(
  engine: ReturnType<typeof createEngine>,
  tag: string,
): Promise<{
  events: AsyncIterable<BackendEvent>;
  refs: {
    request: WeakRef<EngineRequest>;
    messages: WeakRef<ConversationMessage[]>;
    earlier: WeakRef<ConversationMessage>;
  };
}> {
  const messages = historyOf(tag);
  const earlier = messages[0] as ConversationMessage;
  const request = engineRequest(messages);
  const turn = await engine.startTurn(request, new AbortController().signal);
  return {
    events: turn.events,
    refs: { request: new WeakRef(request), messages: new WeakRef(messages), earlier: new WeakRef(earlier) },
  };
}
