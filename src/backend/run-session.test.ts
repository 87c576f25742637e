import { create, fromBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type AgentClientMessage,
  type AgentServerMessage,
  AgentServerMessageSchema,
} from "../gen/agent/v1/agent_pb.js";
import type { RunStream } from "../protocol/cursor/cursor-api.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import { silentLogger } from "../util/logger.js";
import { RunSession } from "./run-session.js";
import { createToolNameMap } from "./tool-names.js";
import { TurnChannel } from "./turn-channel.js";
import type { SurfaceExecutor } from "./types.js";
import { defaultWorkspaceEnvironment } from "./workspace-environment.js";

/** A stream whose sends stay pending until the test lets them through, as when connect's writer is busy. */
function stalledWriterStream(incoming: AgentServerMessage[]) {
  const sent: AgentClientMessage[] = [];
  const stream: RunStream = {
    transport: "http2",
    requestId: "r",
    bytesSent: 0,
    send: (message) => {
      sent.push(message);
      return new Promise<void>(() => {});
    },
    async *messages() {
      yield* incoming;
      await new Promise<void>(() => {});
    },
    closeSend: () => {},
    abort: () => {},
  };
  return { stream, sent };
}

const getBlob = (id: number, blobId: Uint8Array) =>
  create(AgentServerMessageSchema, {
    message: { case: "kvServerMessage", value: { id, message: { case: "getBlobArgs", value: { blobId } } } },
  });

/** A Run session over `incoming`, offering `tools` (by name, each taking any object), with these heartbeat timings. */
function session(
  incoming: AgentServerMessage[],
  executor?: SurfaceExecutor,
  { tools = [] as string[], heartbeatIntervalMs = 60_000, stallTimeoutMs = 60_000 } = {},
) {
  const { stream, sent } = stalledWriterStream(incoming);
  const run = new RunSession({
    stream,
    channel: new TurnChannel(),
    blobs: createBlobStore(),
    logger: silentLogger,
    timings: { heartbeatIntervalMs, stallTimeoutMs, toolBatchWindowMs: 30 },
    exec: {
      environment: defaultWorkspaceEnvironment(),
      tools: tools.map((name) => ({ name, description: "Looks up.", inputSchema: { type: "object" } })),
      toolNames: createToolNameMap(tools),
      systemPrompt: "",
      takenToolCallIds: new Set(),
      newHex: () => "00",
      executor,
    },
    onCheckpoint: () => {},
  });
  return { run, sent };
}

describe("RunSession", () => {
  it.each([
    ["without an executor", undefined],
    ["with a surface executor (ACP)", { workspacePath: "/w", run: () => new Promise<never>(() => {}) }],
  ])(
    "fails an exec of a kind the schema does not know with a throw, %s (every exec is answered)",
    async (_, executor) => {
      // exec_server_message{id: 7, <field 99: an exec kind newer than this schema>}
      const unknownExec = fromBinary(AgentServerMessageSchema, new Uint8Array([0x12, 5, 0x08, 7, 0x9a, 0x06, 0]));
      const { run, sent } = session([unknownExec], executor as SurfaceExecutor | undefined);
      await expect.poll(() => sent.length).toBe(1);
      const control = sent[0]?.message;
      expect(control?.case).toBe("execClientControlMessage");
      const thrown = control?.case === "execClientControlMessage" ? control.value.message : undefined;
      expect(thrown?.case).toBe("throw");
      expect(thrown?.value?.id).toBe(7);
      expect(thrown?.case === "throw" ? thrown.value.error : "").toContain("field 99");
      run.close();
    },
  );

  it("answers the server's blob requests back to back, without waiting for the writer to take each answer", async () => {
    const blobs = createBlobStore();
    const ids = [blobs.put(new Uint8Array([1])), blobs.put(new Uint8Array([2])), blobs.put(new Uint8Array([3]))];
    const { stream, sent } = stalledWriterStream(ids.map((blobId, i) => getBlob(i + 1, blobId)));
    const session = new RunSession({
      stream,
      channel: new TurnChannel(),
      blobs,
      logger: silentLogger,
      timings: { heartbeatIntervalMs: 60_000, stallTimeoutMs: 60_000, toolBatchWindowMs: 30 },
      exec: {
        environment: defaultWorkspaceEnvironment(),
        tools: [],
        toolNames: createToolNameMap([]),
        systemPrompt: "",
        takenToolCallIds: new Set(),
        newHex: () => "00",
      },
      onCheckpoint: () => {},
    });
    await expect.poll(() => sent.length).toBe(3);
    const answered = sent.map((m) =>
      m.message.case === "kvClientMessage" && m.message.value.message.case === "getBlobResult"
        ? [m.message.value.id, [...(m.message.value.message.value.blobData ?? [])]]
        : undefined,
    );
    expect(answered).toEqual([
      [1, [1]],
      [2, [2]],
      [3, [3]],
    ]);
    session.close();
  });

  describe("heartbeats (docs/protocol.md §4.2, §5.1)", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("a running exec is heartbeaten every 3 s, as current clients do; the client heartbeat stays at 5 s", async () => {
      vi.useFakeTimers();
      const mcpArgs = create(AgentServerMessageSchema, {
        message: {
          case: "execServerMessage",
          value: {
            id: 4,
            execId: "e4",
            message: { case: "mcpArgs", value: { name: "lookup", toolName: "lookup", toolCallId: "call_1", args: {} } },
          },
        },
      });
      const { run, sent } = session([mcpArgs], undefined, {
        tools: ["lookup"],
        heartbeatIntervalMs: 5000,
        stallTimeoutMs: 600_000,
      });
      const beats = () =>
        sent.flatMap((m) => {
          if (m.message.case === "clientHeartbeat") return ["client"];
          if (m.message.case === "execClientControlMessage" && m.message.value.message.case === "heartbeat") {
            return [`exec ${m.message.value.message.value.id}`];
          }
          return [];
        });
      await vi.advanceTimersByTimeAsync(3000);
      expect(beats()).toEqual(["exec 4"]);
      await vi.advanceTimersByTimeAsync(2000);
      expect(beats()).toEqual(["exec 4", "client"]);
      await vi.advanceTimersByTimeAsync(1000);
      expect(beats()).toEqual(["exec 4", "client", "exec 4"]);
      run.close();
    });
  });
});
