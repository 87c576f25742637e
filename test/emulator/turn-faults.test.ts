/**
 * Failure modes of the turn protocol over HTTP/2 `Run` (docs/protocol.md §4.4, §5.1, §5.2), driven by a raw
 * connect-es client on the generated schema: faults, waits, wrong replies, heartbeats and cancel.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import type { ExecServerMessage } from "../../src/gen/agent/v1/exec_pb.js";
import type { Logger } from "../../src/util/logger.js";
import { agentClient, BlobStore, driveRun, runRequest, toolDefinition, updateCases } from "./support/raw-client.js";
import { abortAfterHeartbeats, isHeartbeat, mcpReply } from "./support/turn-helpers.js";

let emulator: Emulator;
let client: ReturnType<typeof agentClient>;

beforeAll(async () => {
  emulator = await startEmulator({ heartbeatIntervalMs: 20 });
  client = agentClient(emulator.url, emulator.issueTokens().accessToken);
});
afterAll(async () => {
  await emulator.close();
});

describe("faults and waits", () => {
  it("[[emu:stall N]] stops after N tokens: heartbeats only, until the client leaves", async () => {
    const controller = new AbortController();
    const result = await driveRun(
      client,
      runRequest("[[emu:tokens 10]] [[emu:stall 3]]"),
      new BlobStore(),
      {
        onMessage: abortAfterHeartbeats(5, controller),
      },
      controller.signal,
    );
    expect(result.error?.code).toBe(Code.Canceled);
    expect(result.tokens).toBe(3);
    expect(result.turnEnded).toBe(false);
  });

  it("[[emu:drop N]] drops the connection after N tokens", async () => {
    const result = await driveRun(client, runRequest("[[emu:tokens 10]] [[emu:drop 4]]"), new BlobStore());
    expect(result.tokens).toBe(4);
    expect(result.error).toBeDefined();
    expect(result.turnEnded).toBe(false);
  });

  it("an unanswered exec gets heartbeats only, no progress", async () => {
    const controller = new AbortController();
    const result = await driveRun(
      client,
      runRequest("[[emu:tool lookup {}]]"),
      new BlobStore(),
      {
        tools: [toolDefinition("lookup")],
        onExec: () => undefined,
        onMessage: abortAfterHeartbeats(4, controller),
      },
      controller.signal,
    );
    expect(result.heartbeats).toBeGreaterThanOrEqual(4);
    expect(updateCases(result)).not.toContain("toolCallCompleted");
    expect(result.text).toBe("");
  });

  it("a client that never sends stream_close completes the turn: each exec settles on its result", async () => {
    const result = await driveRun(client, runRequest("[[emu:tool lookup {}]]"), new BlobStore(), {
      tools: [toolDefinition("lookup")],
      closeExecs: false,
      onExec: (exec) => (exec.message.case === "mcpArgs" ? mcpReply(exec, "x") : undefined),
    });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe("lookup returned: x");
    expect(result.turnEnded).toBe(true);
  });

  it("a stream_close before the exec's result is still an error", async () => {
    const result = await driveRun(client, runRequest("hi"), new BlobStore(), {
      answerRequestContext: false,
      onMessage: (m, send) => {
        if (m.message.case === "execServerMessage") {
          const id = m.message.value.id;
          send({
            message: { case: "execClientControlMessage", value: { message: { case: "streamClose", value: { id } } } },
          });
        }
        return undefined;
      },
    });
    expect(result.error?.code).toBe(Code.InvalidArgument);
    expect(result.error?.rawMessage).toContain("closed without a result");
  });

  it("a second result for a settled exec is an error", async () => {
    const result = await driveRun(client, runRequest("[[emu:tool lookup {}]]"), new BlobStore(), {
      tools: [toolDefinition("lookup")],
      closeExecs: false,
      onExec: (exec) => (exec.message.case === "mcpArgs" ? mcpReply(exec, "x") : undefined),
      onMessage: (m, send) => {
        if (m.message.case === "execServerMessage" && m.message.value.message.case === "mcpArgs") {
          send({ message: mcpReply(m.message.value, "again") });
        }
        return undefined;
      },
    });
    expect(result.error?.code).toBe(Code.InvalidArgument);
    expect(result.error?.rawMessage).toContain("answered twice");
  });

  it("an exec left unanswered is logged at debug level, once, with what the turn waits for", async () => {
    const debug: { message: string; fields: unknown }[] = [];
    const logger: Logger = {
      debug: (message, fields) => debug.push({ message, fields }),
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      child: () => logger,
    };
    const logged = await startEmulator({ heartbeatIntervalMs: 10, logger });
    try {
      const loggedClient = agentClient(logged.url, logged.issueTokens().accessToken);
      const controller = new AbortController();
      await driveRun(
        loggedClient,
        runRequest("[[emu:tool lookup {}]]"),
        new BlobStore(),
        { tools: [toolDefinition("lookup")], onExec: () => undefined, onMessage: abortAfterHeartbeats(4, controller) },
        controller.signal,
      );
      const waits = debug.filter((entry) => entry.message === "turn waits for the client");
      // Under load a heartbeat may also tick while the request context (exec 1) is in flight; what matters is that
      // the unanswered tool call is named, once, and is the last thing the turn waits for.
      const execTwo = waits.filter((entry) => JSON.stringify(entry.fields) === '{"waiting":"exec 2: mcpResult"}');
      expect(execTwo).toHaveLength(1);
      expect(waits.at(-1)).toEqual({ message: "turn waits for the client", fields: { waiting: "exec 2: mcpResult" } });
    } finally {
      await logged.close();
    }
  });

  it("an unacked set_blob_args gets heartbeats only: no checkpoint, no turn_ended", async () => {
    const controller = new AbortController();
    const result = await driveRun(
      client,
      runRequest("hi"),
      new BlobStore(),
      {
        ackSets: false,
        onMessage: abortAfterHeartbeats(3, controller),
      },
      controller.signal,
    );
    expect(result.text).toBe("You said: hi");
    expect(result.checkpoint).toBeUndefined();
    expect(result.turnEnded).toBe(false);
    expect(result.messages.some((m) => m.message.case === "kvServerMessage")).toBe(true);
  });

  it("a reply with a wrong exec_id or an unknown id is an error; an empty exec_id is accepted", async () => {
    const wrongExecId = await driveRun(client, runRequest("hi"), new BlobStore(), {
      answerRequestContext: false,
      onMessage: (m, send) => {
        if (m.message.case === "execServerMessage") {
          send({
            message: {
              case: "execClientMessage",
              value: { id: m.message.value.id, execId: "other", message: { case: "requestContextResult", value: {} } },
            },
          });
        }
        return undefined;
      },
      closeExecs: false,
      onExec: () => undefined,
    });
    expect(wrongExecId.error?.code).toBe(Code.InvalidArgument);
    const unknownId = await driveRun(client, runRequest("hi"), new BlobStore(), {
      answerRequestContext: false,
      onMessage: (m, send) => {
        if (m.message.case === "execServerMessage") {
          send({
            message: {
              case: "execClientMessage",
              value: { id: 999, message: { case: "requestContextResult", value: {} } },
            },
          });
        }
        return undefined;
      },
    });
    expect(unknownId.error?.code).toBe(Code.InvalidArgument);
    const emptyExecId = await driveRun(client, runRequest("hi"), new BlobStore(), {
      answerRequestContext: false,
      onMessage: (m, send) => {
        if (m.message.case === "execServerMessage") {
          const id = m.message.value.id;
          send({
            message: {
              case: "execClientMessage",
              value: {
                id,
                message: { case: "requestContextResult", value: { result: { case: "success", value: {} } } },
              },
            },
          });
          send({
            message: { case: "execClientControlMessage", value: { message: { case: "streamClose", value: { id } } } },
          });
        }
        return undefined;
      },
    });
    expect(emptyExecId.error).toBeUndefined();
    expect(emptyExecId.turnEnded).toBe(true);
  });

  it("a reply with the wrong result case is an error", async () => {
    const result = await driveRun(client, runRequest('[[emu:native read {"path":"a"}]]'), new BlobStore(), {
      onExec: (exec) => ({
        case: "execClientMessage",
        value: { id: exec.id, execId: exec.execId, message: { case: "lsResult", value: {} } },
      }),
    });
    expect(result.error?.code).toBe(Code.InvalidArgument);
  });

  it("heartbeats flow while the server waits, and client_heartbeat is accepted", async () => {
    let answered = false;
    let heartbeats = 0;
    let exec: ExecServerMessage | undefined;
    const result = await driveRun(client, runRequest("[[emu:tool lookup {}]]"), new BlobStore(), {
      tools: [toolDefinition("lookup")],
      onExec: (e) => {
        exec = e;
        return undefined;
      },
      onMessage: (m, send) => {
        send({ message: { case: "clientHeartbeat", value: {} } });
        if (isHeartbeat(m)) heartbeats++;
        if (!answered && heartbeats >= 3) {
          if (exec !== undefined) {
            answered = true;
            send({ message: mcpReply(exec, "late") });
            send({
              message: {
                case: "execClientControlMessage",
                value: { message: { case: "streamClose", value: { id: exec.id } } },
              },
            });
          }
        }
        return undefined;
      },
    });
    expect(result.error).toBeUndefined();
    expect(result.heartbeats).toBeGreaterThanOrEqual(3);
    expect(result.text).toBe("lookup returned: late");
  });

  it("cancel_action ends the turn cleanly with turn_ended", async () => {
    let deltas = 0;
    const result = await driveRun(client, runRequest("[[emu:tokens 500]] [[emu:rate 100]]"), new BlobStore(), {
      onMessage: (m, send) => {
        if (m.message.case === "interactionUpdate" && m.message.value.message.case === "textDelta" && ++deltas === 1) {
          send({ message: { case: "conversationAction", value: { action: { case: "cancelAction", value: {} } } } });
        }
        return undefined;
      },
    });
    expect(result.error).toBeUndefined();
    expect(result.turnEnded).toBe(true);
    expect(result.tokens).toBeLessThan(500);
    expect(result.checkpoint).toBeUndefined();
  });

  it("a client that closes the stream ends the turn on the server", async () => {
    emulator.resetStats();
    const controller = new AbortController();
    await driveRun(
      client,
      runRequest("[[emu:tokens 500]] [[emu:rate 100]]"),
      new BlobStore(),
      {
        onMessage: (m) => {
          if (m.message.case === "interactionUpdate" && m.message.value.message.case === "textDelta")
            controller.abort();
          return undefined;
        },
      },
      controller.signal,
    );
    await expect.poll(() => emulator.stats().turns[0]?.outcome).toBe("client_closed");
  });

  it("a second run_request on a running stream is an error", async () => {
    const result = await driveRun(client, runRequest("hi"), new BlobStore(), {
      onMessage: (m, send) => {
        if (m.message.case === "execServerMessage") send(runRequest("again"));
        return undefined;
      },
    });
    expect(result.error?.code).toBe(Code.InvalidArgument);
  });
});
