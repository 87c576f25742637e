/**
 * RunSession against a scripted server stream: a call handed to the caller that Cursor closes on its own (an exec
 * abort, or a `tool_call_completed` reporting an error before our result, docs/protocol.md §4.6) is settled, ends the
 * segment, and gets no exec heartbeats or result from us. And where the segment ends on a step's calls: at the listed
 * count (or once Cursor is idle while listed calls are missing), at the step's `step_completed`, never while a client
 * tool's arguments are still forming, and a call that comes after the pause is handed out on its own with a pause of
 * its own.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type AgentServerMessage, AgentServerMessageSchema } from "../gen/agent/v1/agent_pb.js";
import type { InteractionUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import { ToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import type { RunStream } from "../protocol/cursor/run-stream.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import { ProxyError } from "../util/errors.js";
import { silentLogger } from "../util/logger.js";
import { RunSession } from "./run-session.js";
import { createToolNameMap } from "./tool-names.js";
import { type ChannelItem, TurnChannel } from "./turn-channel.js";
import type { ClientTool } from "./types.js";

const lookup: ClientTool = {
  name: "lookup",
  description: "Looks something up.",
  inputSchema: { type: "object", properties: { q: { type: "string" } } },
};

const note: ClientTool = { name: "note", description: "Takes a note.", inputSchema: { type: "object" } };

/** A RunStream whose server messages the test pushes; `closeServer` ends it. */
function scriptedStream() {
  const queue: AgentServerMessage[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: Error | undefined;
  const sent: string[] = [];
  const stream: RunStream = {
    transport: "http2",
    requestId: "test",
    bytesSent: 0,
    send: async (message) => {
      sent.push(message.message.case ?? "");
    },
    async *messages() {
      for (;;) {
        const next = queue.shift();
        if (next !== undefined) yield next;
        else if (failure !== undefined) throw failure;
        else if (ended) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    closeSend: () => undefined,
    abort: () => {
      ended = true;
      wake?.();
    },
  };
  return {
    stream,
    sent,
    push(init: ServerInit) {
      queue.push(create(AgentServerMessageSchema, init));
      wake?.();
    },
    /** Ends the server's stream cleanly after what was pushed. */
    end() {
      ended = true;
      wake?.();
    },
    /** Fails the server's stream after what was pushed. */
    fail(error: Error) {
      failure = error;
      wake?.();
    },
  };
}

type ServerInit = Parameters<typeof create<typeof AgentServerMessageSchema>>[1];

function mcpExec(id: number, toolCallId: string, tool = "lookup"): ServerInit {
  return {
    message: {
      case: "execServerMessage",
      value: {
        id,
        execId: `exec-${id}`,
        message: { case: "mcpArgs", value: { name: tool, toolName: tool, toolCallId, args: {} } },
      },
    },
  };
}

/** A native shell exec: refused by the session, whose caller has no shell (a call the caller never gets). */
function shellExec(id: number, toolCallId: string): ServerInit {
  return {
    message: {
      case: "execServerMessage",
      value: { id, execId: `exec-${id}`, message: { case: "shellArgs", value: { command: "ls", toolCallId } } },
    },
  };
}

/** `tool_call_completed` for the envelope's `callId`; `argsId` is the `tool_call_id` of the McpArgs it carries. */
function completed(callId: string, error: string | undefined, argsId?: string): ServerInit {
  const args = argsId === undefined ? {} : { args: { name: "lookup", toolName: "lookup", toolCallId: argsId } };
  const toolCall =
    error === undefined
      ? create(ToolCallSchema, {
          tool: { case: "mcpToolCall", value: { ...args, result: { result: { case: "success", value: {} } } } },
        })
      : create(ToolCallSchema, {
          tool: { case: "mcpToolCall", value: { ...args, result: { result: { case: "error", value: { error } } } } },
        });
  return {
    message: {
      case: "interactionUpdate",
      value: { message: { case: "toolCallCompleted", value: { callId, toolCall } } },
    },
  };
}

async function nextToolCallId(next: () => Promise<ChannelItem>): Promise<string> {
  const item = await next();
  if (item.type !== "event" || item.event.type !== "tool-call")
    throw new Error(`expected a tool call, got ${item.type}`);
  return item.event.toolCallId;
}

async function startSession(toolBatchWindowMs = 60_000, stallTimeoutMs = 60_000, listedCallsIdleMs?: number) {
  const script = scriptedStream();
  const warnings: Array<{ message: string; fields: unknown }> = [];
  const channel = new TurnChannel();
  let hex = 0;
  const session = new RunSession({
    stream: script.stream,
    channel,
    exec: {
      tools: [lookup, note],
      toolNames: createToolNameMap(["lookup", "note"]),
      environment: { osVersion: "linux 6.0", workspacePath: "/w", shell: "bash", timeZone: "UTC" },
      systemPrompt: "",
      takenToolCallIds: new Set(),
      // Distinct per call, as the turn's are (a constant one would make a second id for one call loop forever).
      newHex: () => (hex++).toString(16).padStart(16, "0"),
    },
    blobs: createBlobStore(),
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: (message, fields) => warnings.push({ message, fields }),
      error: () => undefined,
      child: () => silentLogger,
    },
    // A batch window far longer than the test: any pause the test sees comes from settling (or a listed count).
    timings: {
      heartbeatIntervalMs: 60_000,
      stallTimeoutMs,
      toolBatchWindowMs,
      ...(listedCallsIdleMs === undefined ? {} : { listedCallsIdleMs }),
    },
    onCheckpoint: () => undefined,
  });
  const next = async (): Promise<ChannelItem> => channel.next();
  return { script, session, next, warnings };
}

describe("RunSession: calls Cursor closes on its own", () => {
  it("settles a pending call whose tool_call_completed reports an error, and pauses the segment", async () => {
    const { script, session, next } = await startSession();
    script.push(mcpExec(1, "call_1"));
    const id = await nextToolCallId(next);
    // The caller's id is sanitised; Cursor's completion names the call by the args' tool_call_id.
    script.push(completed("call_1", "the server gave up"));
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(0);
    expect(session.settled.get(id)).toBe("the server gave up");
    session.close();
  });

  it("settles it when its McpArgs id is not the completion's envelope id (T5), found by the McpArgs it carries", async () => {
    const { script, session, next } = await startSession();
    script.push(mcpExec(1, "toolu_1"));
    const id = await nextToolCallId(next);
    script.push(completed("call_1", "the server gave up", "toolu_1"));
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(0);
    expect(session.settled.get(id)).toBe("the server gave up");
    session.close();
  });

  it("leaves a pending call alone when the completion is a success or names another call", async () => {
    const { script, session, next } = await startSession();
    script.push(mcpExec(1, "call_1"));
    const id = await nextToolCallId(next);
    script.push(completed("call_1", undefined));
    script.push(completed("call_other", "unrelated failure"));
    script.push({ message: { case: "interactionUpdate", value: { message: { case: "turnEnded", value: {} } } } });
    expect(await next()).toEqual({ type: "turn-ended" });
    expect([...session.pending.keys()]).toEqual([id]);
    expect(session.settled.size).toBe(0);
    session.close();
  });

  it("settles a pending call on exec abort", async () => {
    const { script, session, next } = await startSession();
    script.push(mcpExec(7, "call_7"));
    const id = await nextToolCallId(next);
    script.push({
      message: { case: "execServerControlMessage", value: { message: { case: "abort", value: { id: 7 } } } },
    });
    expect(await next()).toEqual({ type: "pause" });
    expect(session.settled.get(id)).toContain("cancelled");
    // Nothing was sent for the call: no result, no stream_close.
    expect(script.sent).toEqual([]);
    session.close();
  });
});

describe("RunSession: tool_requests_listed (cursor-protocol-addendum-2.md §4)", () => {
  const listed = (callCount: number): ServerInit => ({
    message: { case: "interactionUpdate", value: { message: { case: "toolRequestsListed", value: { callCount } } } },
  });

  it("pauses as soon as every listed call has arrived, without the batch window", async () => {
    const { script, session, next } = await startSession();
    script.push(listed(2));
    script.push(mcpExec(1, "call_1"));
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    await nextToolCallId(next);
    // The batch window of this harness is far longer than the test: this pause is the listed count's.
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  });

  it("runs no batch window while fewer calls than listed have arrived: the step's calls stay together", async () => {
    // A 1 ms window: it passes long before each later call, so only the listed count keeps the step together.
    const { script, session, next } = await startSession(1);
    script.push(listed(3));
    script.push(mcpExec(1, "call_1"));
    await nextToolCallId(next);
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(mcpExec(3, "call_3"));
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(3);
    session.close();
  });

  it("counts a tool exec it refuses (no equivalent among the caller's tools) as one of the listed calls", async () => {
    const { script, session, next } = await startSession();
    script.push(listed(2));
    script.push(shellExec(1, "sh_1"));
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    // The batch window of this harness is far longer than the test: this pause is the listed count's.
    expect(await nextOrNothing(next)).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(1);
    session.close();
  });

  it("counts a call Cursor completes without an exec (its own tools), never one that came as an exec", async () => {
    const { script, session, next } = await startSession();
    script.push(listed(2));
    script.push(mcpExec(1, "call_1"));
    await nextToolCallId(next);
    // A completion of the call that came as an exec (by its McpArgs id, T5) is not another call.
    script.push(completed("call_9", undefined, "call_1"));
    expect(await nextOrNothing(next)).toBe("nothing");
    const todos = create(ToolCallSchema, { tool: { case: "updateTodosToolCall", value: {} } });
    script.push(update({ case: "toolCallCompleted", value: { callId: "todo_1", toolCall: todos } }));
    expect(await nextOrNothing(next)).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(1);
    session.close();
  });

  /** A session whose batch window and idle period are far longer than the tests: a pause they see is the count's. */
  const lateCountSession = () => startSession(60_000, 60_000, 600_000);

  /**
   * A count of 2 comes after one call of the step went out: the segment waits for the step's next call (`id`), and
   * pauses on the two.
   */
  async function countMetByNextCall(started: Awaited<ReturnType<typeof startSession>>, id: number): Promise<void> {
    const { script, session, next, warnings } = started;
    script.push(listed(2));
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(mcpExec(id, `call_${id}`));
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    expect(warnings).toEqual([]);
    session.close();
  }

  it("counts the step's calls that came before the count (the reference does not fix the order)", async () => {
    const started = await lateCountSession();
    started.script.push(mcpExec(1, "call_1"));
    await nextToolCallId(started.next);
    await countMetByNextCall(started, 2);
  });

  it("pauses at a count that comes after the step's last call", async () => {
    const { script, session, next } = await lateCountSession();
    script.push(mcpExec(1, "call_1"));
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    await nextToolCallId(next);
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(listed(2));
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  });

  it("does not count the calls of an earlier step (step_started) toward a count that comes late", async () => {
    const started = await lateCountSession();
    started.script.push(update({ case: "stepStarted", value: { stepId: 1n } }));
    // Refused here (the caller has no shell): no pause, but a call of step 1.
    started.script.push(shellExec(1, "sh_1"));
    started.script.push(update({ case: "stepStarted", value: { stepId: 2n } }));
    started.script.push(mcpExec(2, "call_2"));
    await nextToolCallId(started.next);
    await countMetByNextCall(started, 3);
  });

  it("keeps counting the step's calls past another step's step_completed", async () => {
    const started = await lateCountSession();
    started.script.push(update({ case: "stepStarted", value: { stepId: 7n } }));
    started.script.push(mcpExec(1, "call_1"));
    await nextToolCallId(started.next);
    started.script.push(update({ case: "stepCompleted", value: { stepId: 6n } }));
    await countMetByNextCall(started, 2);
  });

  it("does not count the calls handed out before a pause toward a count that comes late", async () => {
    const started = await lateCountSession();
    started.script.push(mcpExec(1, "call_1"));
    await nextToolCallId(started.next);
    // Cursor closes the call: the segment ends on it.
    started.script.push(completed("call_1", "the server gave up"));
    expect(await started.next()).toEqual({ type: "pause" });
    started.script.push(mcpExec(2, "call_2"));
    await nextToolCallId(started.next);
    await countMetByNextCall(started, 3);
  });

  it("does not carry a count that came after its step's pause into the next step", async () => {
    // A 20 ms window ends the step before its count comes; the next step's calls come together.
    const { script, session, next, warnings } = await startSession(20, 600_000, 600_000);
    script.push(update({ case: "stepStarted", value: { stepId: 1n } }));
    script.push(mcpExec(1, "call_1"));
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    script.push(listed(1));
    script.push(update({ case: "stepCompleted", value: { stepId: 1n } }));
    script.push(update({ case: "stepStarted", value: { stepId: 2n } }));
    script.push(mcpExec(2, "call_2"));
    script.push(mcpExec(3, "call_3"));
    await nextToolCallId(next);
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect(warnings).toEqual([]);
    session.close();
  });

  it("on a stall, hands out the calls that came when fewer than listed arrive", async () => {
    // Cursor may count a call the caller never sees and wait for the others' results: only the watchdog ends that
    // (the window, far longer than the test, does not run at all while listed calls are to come).
    const { script, session, next } = await startSession(60_000, 200);
    session.setStallWatch(true);
    script.push(listed(3));
    script.push(mcpExec(1, "call_1"));
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  }, 20_000);
});

/**
 * Calls Cursor listed that never come must not hold the calls that did until the stall watchdog: once Cursor made no
 * progress for the idle period, those go out. The stall timeout here is ten minutes and the watchdog is on, as in a
 * segment; the test's own timeout is the safety net, so a segment that waited for the stall cannot pass.
 */
describe("RunSession: listed calls that do not come (docs/protocol.md §4.6)", () => {
  const TEN_MINUTES = 600_000;
  const listed = (callCount: number): ServerInit => update({ case: "toolRequestsListed", value: { callCount } });
  const tokens = update({ case: "tokenDelta", value: { tokens: 1 } });
  const heartbeat = update({ case: "heartbeat", value: {} });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function idleSession(listedCallsIdleMs: number) {
    const started = await startSession(TEN_MINUTES, TEN_MINUTES, listedCallsIdleMs);
    started.session.setStallWatch(true);
    return started;
  }

  it("hands out the calls that came once Cursor made no progress for the idle period, with the stall's warning", async () => {
    const { script, session, next, warnings } = await idleSession(200);
    script.push(listed(3));
    script.push(mcpExec(1, "call_1"));
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    await nextToolCallId(next);
    // Heartbeats are not progress: they do not keep the wait going.
    for (let i = 0; i < 3; i++) script.push(heartbeat);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    expect(warnings).toEqual([
      {
        message: "Cursor listed more tool calls for the step than came; handing out those that did",
        fields: { listed: 3, came: 2, idleMs: 200 },
      },
    ]);
    // A call that still comes is not lost: it goes out as the next segment's (docs/protocol.md §4.6).
    script.push(mcpExec(3, "call_3"));
    await nextToolCallId(next);
    expect(session.pending.size).toBe(3);
    session.close();
  }, 10_000);

  it("keeps waiting while Cursor makes progress: calls further apart than the idle period stay one message", async () => {
    // Each piece of progress comes well within the idle period, the calls far apart from each other: the idle period
    // is counted from the last progress, not from the last call.
    const { script, session, next, warnings } = await idleSession(1000);
    script.push(listed(3));
    script.push(mcpExec(1, "call_1"));
    await nextToolCallId(next);
    for (const id of [2, 3]) {
      for (let i = 0; i < 8; i++) {
        await sleep(100);
        script.push(tokens);
      }
      script.push(mcpExec(id, `call_${id}`));
      // A pause before this call would fail here: a pause is not a tool call.
      await nextToolCallId(next);
    }
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(3);
    expect(warnings).toEqual([]);
    session.close();
  }, 10_000);

  it("leaves a call forming in front of the caller to hold the segment, and counts the idle period again after it", async () => {
    const { script, session, next } = await idleSession(100);
    script.push(listed(3));
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextToolCallId(next);
    const delta = await next();
    expect(delta.type === "event" && delta.event.type).toBe("tool-call-delta");
    // Far past the idle period: the forming call holds the segment (its mcp_args may still come, §4.6).
    await sleep(300);
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(partial("call_2", '{"q":"b"}'));
    script.push(mcpExec(2, "call_2"));
    expect((await next()).type).toBe("event");
    await nextToolCallId(next);
    // The third listed call never comes: the idle period after the second call's exec ends the wait.
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  }, 10_000);
});

/** An update of the server's interaction stream. */
const update = (value: ServerUpdate): ServerInit => ({
  message: { case: "interactionUpdate", value: { message: value } },
});
type ServerUpdate = NonNullable<MessageInitShape<typeof InteractionUpdateSchema>["message"]>;

/**
 * A `partial_tool_call` of the client tool `lookup`: the argument text so far (cursor-protocol-addendum-3 T1);
 * `toolCallId`, the id its McpArgs carry (T5), none when not given.
 */
const partial = (callId: string, argsTextDelta: string, toolCallId = ""): ServerInit =>
  update({
    case: "partialToolCall",
    value: {
      callId,
      argsTextDelta,
      toolCall: create(ToolCallSchema, {
        tool: { case: "mcpToolCall", value: { args: { name: "lookup", toolName: "lookup", toolCallId } } },
      }),
    },
  });

/** What the channel holds next, or "nothing" when nothing came for a while (a generous wait: ordering, not time). */
async function nextOrNothing(next: () => Promise<ChannelItem>): Promise<ChannelItem | "nothing"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const quiet = new Promise<"nothing">((resolve) => (timer = setTimeout(() => resolve("nothing"), 150)));
  try {
    return await Promise.race([next(), quiet]);
  } finally {
    clearTimeout(timer);
  }
}

describe("RunSession: where the segment ends on a step's calls (docs/protocol.md §4.6)", () => {
  it("does not pause while a client tool's arguments are forming in front of the caller, and pauses after its exec", async () => {
    // A 1 ms window: it passes long before the second call's exec, so only the forming call holds the pause.
    const { script, session, next } = await startSession(1);
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextToolCallId(next);
    const delta = await next();
    expect(delta.type === "event" && delta.event.type).toBe("tool-call-delta");
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(partial("call_2", '{"q":"b"}'));
    script.push(mcpExec(2, "call_2"));
    expect((await next()).type).toBe("event");
    const second = await nextToolCallId(next);
    // The completed call keeps the id its arguments streamed under.
    expect(delta.type === "event" && delta.event.type === "tool-call-delta" && delta.event.toolCallId).toBe(second);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  });

  it("drops the forming call Cursor completes without an exec, and lets the pause through", async () => {
    const { script, session, next } = await startSession(1);
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextToolCallId(next);
    const shown = await next();
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(completed("call_2", undefined));
    // The caller will not get it as a call: what it holds of its pieces goes (docs/protocol.md §4.6).
    const id = shown.type === "event" && shown.event.type === "tool-call-delta" ? shown.event.toolCallId : "";
    expect(await next()).toEqual({ type: "dropped", toolCallId: id });
    expect(await next()).toEqual({ type: "pause" });
    session.close();
  });

  it("hands a call that comes after the pause out on its own, with its own pause", async () => {
    const { script, session, next } = await startSession(1);
    script.push(mcpExec(1, "call_1"));
    const first = await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    script.push(partial("call_2", '{"q":"b"}'));
    script.push(mcpExec(2, "call_2"));
    expect((await next()).type).toBe("event");
    const late = await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()]).toEqual([first, late]);
    session.close();
  });

  it("lets a call that arrived while the event loop was busy past the window join the batch", async () => {
    // The window is armed by the first call; then the loop is kept busy well past it, and the second call is delivered
    // in the check phase after the one where the window's timer comes due (a due timer runs before the sockets are
    // read, so a call Cursor sent in time can still be unread when the window ends).
    const { script, session, next } = await startSession(200);
    await new Promise<void>((resolve) => {
      setImmediate(() => {
        script.push(mcpExec(1, "call_1"));
        setImmediate(() => {
          setImmediate(() => {
            script.push(mcpExec(2, "call_2"));
            resolve();
          });
          const until = performance.now() + 300;
          while (performance.now() < until) {
            // busy: the loop cannot run anything else
          }
        });
      });
    });
    await nextToolCallId(next);
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  });

  it("pauses at the step_completed of the step the calls came in, without the window", async () => {
    const { script, session, next } = await startSession();
    script.push(update({ case: "stepStarted", value: { stepId: 7n } }));
    script.push(mcpExec(1, "call_1"));
    script.push(mcpExec(2, "call_2"));
    await nextToolCallId(next);
    await nextToolCallId(next);
    // Another step's completion says nothing about this one.
    script.push(update({ case: "stepCompleted", value: { stepId: 6n } }));
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(update({ case: "stepCompleted", value: { stepId: 7n } }));
    // The batch window of this harness is far longer than the test: this pause is the step's.
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  });
});

/**
 * A call whose arguments Cursor starts streaming and never completes (no `mcp_args`, no completion): the segment
 * must not wait for it until the stall timeout. The stall timeout here is ten minutes and the watchdog is on, as in
 * a segment; each test's own timeout is the safety net, so a segment that waited for the forming call cannot pass.
 */
describe("RunSession: a call whose arguments never complete (docs/protocol.md §4.6)", () => {
  const TEN_MINUTES = 600_000;
  const listed = (callCount: number): ServerInit => ({
    message: { case: "interactionUpdate", value: { message: { case: "toolRequestsListed", value: { callCount } } } },
  });

  async function formingSession(toolBatchWindowMs: number, stallTimeoutMs = TEN_MINUTES) {
    const started = await startSession(toolBatchWindowMs, stallTimeoutMs);
    started.session.setStallWatch(true);
    return started;
  }

  async function nextDeltaId(next: () => Promise<ChannelItem>): Promise<string> {
    const item = await next();
    if (item.type !== "event" || item.event.type !== "tool-call-delta")
      throw new Error(`expected a delta, got ${item.type}`);
    return item.event.toolCallId;
  }

  it("(a) step_completed does not drop a call still forming: its mcp_args, coming after it, completes it", async () => {
    // Where Cursor sends step_completed relative to a step's execs is not known (docs/protocol.md §4.6).
    const { script, session, next } = await formingSession(1);
    script.push(update({ case: "stepStarted", value: { stepId: 3n } }));
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    const complete = await nextToolCallId(next);
    const forming = await nextDeltaId(next);
    script.push(update({ case: "stepCompleted", value: { stepId: 3n } }));
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(partial("call_2", '{"q":"b"}'));
    script.push(mcpExec(2, "call_2"));
    expect((await next()).type).toBe("event");
    expect(await nextToolCallId(next)).toBe(forming);
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()]).toEqual([complete, forming]);
    session.close();
  }, 20_000);

  it("(b) drops it when the turn ends, before the turn-ended; a stream that just ends is the end", async () => {
    const { script, session, next } = await formingSession(TEN_MINUTES);
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextToolCallId(next);
    const forming = await nextDeltaId(next);
    script.push(update({ case: "turnEnded", value: {} }));
    script.push({ message: { case: "interactionUpdate", value: { message: { case: "heartbeat", value: {} } } } });
    script.end();
    expect(await next()).toEqual({ type: "dropped", toolCallId: forming });
    expect(await next()).toEqual({ type: "turn-ended" });
    expect(await next()).toEqual({ type: "end" });
    session.close();
  }, 20_000);

  it("(b) ends at the end of the stream even without turn_ended", async () => {
    const { script, session, next } = await formingSession(TEN_MINUTES);
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextToolCallId(next);
    await nextDeltaId(next);
    script.end();
    expect(await next()).toEqual({ type: "end" });
    session.close();
  }, 20_000);

  it("(c) fails the channel with the stream's error", async () => {
    const { script, session, next } = await formingSession(TEN_MINUTES);
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextToolCallId(next);
    await nextDeltaId(next);
    script.fail(new ProxyError("rate_limited", "Too many requests."));
    await expect(next()).rejects.toMatchObject({ code: "rate_limited" });
    session.close();
  }, 20_000);

  it("(d) interleaved calls: a later call's mcp_args leaves an earlier call still forming alone, its own completes it", async () => {
    const { script, session, next } = await formingSession(1);
    script.push(partial("call_2", '{"q":'));
    script.push(partial("call_3", '{"q":"c"}'));
    script.push(mcpExec(3, "call_3"));
    const earlier = await nextDeltaId(next);
    const later = await nextDeltaId(next);
    expect(await nextToolCallId(next)).toBe(later);
    // Still forming in front of the caller: the segment waits for it.
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(partial("call_2", '{"q":"b"}'));
    script.push(mcpExec(2, "call_2"));
    expect((await next()).type).toBe("event");
    expect(await nextToolCallId(next)).toBe(earlier);
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()].sort()).toEqual([earlier, later].sort());
    session.close();
  }, 20_000);

  it("(d) when the earlier call never completes, the watchdog hands out the later, complete one", async () => {
    // Nothing in the stream says the earlier call is over (calls can interleave): only the stall ends the wait.
    const { script, session, next } = await formingSession(1, 200);
    script.push(listed(2));
    script.push(partial("call_2", '{"q":'));
    script.push(partial("call_3", '{"q":"c"}'));
    script.push(mcpExec(3, "call_3"));
    const forming = await nextDeltaId(next);
    const later = await nextDeltaId(next);
    expect(await nextToolCallId(next)).toBe(later);
    expect(await next()).toEqual({ type: "dropped", toolCallId: forming });
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()]).toEqual([later]);
    session.close();
  }, 20_000);

  it("keeps holding for a call that began forming after the complete one (it is still being written)", async () => {
    const { script, session, next } = await formingSession(1);
    script.push(partial("call_1", '{"q":"a"}'));
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_2", '{"q":'));
    await nextDeltaId(next);
    await nextToolCallId(next);
    await nextDeltaId(next);
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(partial("call_2", '{"q":"b"}'));
    script.push(mcpExec(2, "call_2"));
    expect((await next()).type).toBe("event");
    await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect(session.pending.size).toBe(2);
    session.close();
  }, 20_000);

  it("shows no arguments that stream after their call's mcp_args (T3), so they hold nothing back", async () => {
    const { script, session, next } = await formingSession(1);
    script.push(mcpExec(1, "call_1"));
    script.push(partial("call_1", '{"q":'));
    script.push(partial("call_1", '{"q":"a"}'));
    const complete = await nextToolCallId(next);
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()]).toEqual([complete]);
    session.close();
  }, 20_000);

  it("drops pieces shown before an update linked them to a call whose mcp_args came first, and pauses then", async () => {
    // The first piece names no McpArgs id, so it cannot be told from a new call; the second names the exec's (T5).
    const { script, session, next } = await formingSession(1);
    script.push(mcpExec(1, "toolu_1"));
    script.push(partial("call_1", '{"q":'));
    const complete = await nextToolCallId(next);
    const shown = await nextDeltaId(next);
    expect(await nextOrNothing(next)).toBe("nothing");
    script.push(partial("call_1", '{"q":"a"}', "toolu_1"));
    expect(await next()).toEqual({ type: "dropped", toolCallId: shown });
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()]).toEqual([complete]);
    session.close();
  }, 20_000);

  it("on a stall, hands out the complete calls instead of failing, and drops the call that stopped forming", async () => {
    // Nothing says this call is over (the complete call never streamed): only the watchdog can end the wait.
    const { script, session, next } = await formingSession(1, 200);
    script.push(partial("call_2", '{"q":'));
    script.push(mcpExec(1, "call_1", "note"));
    const forming = await nextDeltaId(next);
    const complete = await nextToolCallId(next);
    expect(await next()).toEqual({ type: "dropped", toolCallId: forming });
    expect(await next()).toEqual({ type: "pause" });
    expect([...session.pending.keys()]).toEqual([complete]);
    session.close();
  }, 20_000);
});
