import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
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

describe("RunSession", () => {
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
});
