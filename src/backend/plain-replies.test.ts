import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import { RequestContextSchema } from "../gen/agent/v1/request_context_pb.js";
import { encodeClientMessage } from "../protocol/cursor/run-stream.js";
import { execHeartbeat, requestContextReply, streamClose } from "./exec-handler.js";
import { getBlobAnswer, setBlobAnswer } from "./kv-answer.js";

describe("kv answers", () => {
  const kv = (id: number, message: object) =>
    create(AgentClientMessageSchema, { message: { case: "kvClientMessage", value: { id, message } } } as never);

  it.each([0, 1, 127, 128, 300, 2 ** 32 - 1])("set_blob_result for id %i is create()'s message and bytes", (id) => {
    const expected = kv(id, { case: "setBlobResult", value: {} });
    expect(setBlobAnswer(id)).toStrictEqual(expected);
    expect(encodeClientMessage(setBlobAnswer(id))).toStrictEqual(toBinary(AgentClientMessageSchema, expected));
  });

  it.each([
    ["a blob", Uint8Array.from([1, 2, 3])],
    ["an empty blob", new Uint8Array(0)],
    ["no blob", undefined],
  ])("get_blob_result with %s is create()'s message and bytes", (_name, data) => {
    const expected = kv(9, { case: "getBlobResult", value: data === undefined ? {} : { blobData: data } });
    expect(getBlobAnswer(9, data)).toStrictEqual(expected);
    expect(encodeClientMessage(getBlobAnswer(9, data))).toStrictEqual(toBinary(AgentClientMessageSchema, expected));
  });
});

describe("exec control replies", () => {
  const control = (message: object) =>
    create(AgentClientMessageSchema, { message: { case: "execClientControlMessage", value: { message } } } as never);

  it.each([0, 1, 200, 2 ** 32 - 1])(
    "stream_close and heartbeat for exec %i are create()'s messages and bytes",
    (id) => {
      for (const [made, expected] of [
        [streamClose(id), control({ case: "streamClose", value: { id } })],
        [execHeartbeat(id), control({ case: "heartbeat", value: { id } })],
      ] as const) {
        expect(made).toStrictEqual(expected);
        expect(encodeClientMessage(made)).toStrictEqual(toBinary(AgentClientMessageSchema, expected));
      }
    },
  );
});

describe("request context reply", () => {
  const context = create(RequestContextSchema, {
    env: { osVersion: "linux 6", workspacePaths: ["/w"], shell: "bash", timeZone: "UTC", projectFolder: "/w" },
    tools: [{ name: "read", description: "reads", providerIdentifier: "cursor-bridge", toolName: "read" }],
    cloudRule: "be brief",
  });

  it.each([
    [0, ""],
    [1, "exec-1"],
    [300, "e"],
    [2 ** 32 - 1, "x".repeat(200)],
  ])("for exec %i (%s) is create()'s message and bytes", (id, execId) => {
    const expected = create(AgentClientMessageSchema, {
      message: {
        case: "execClientMessage",
        value: {
          id,
          execId,
          message: {
            case: "requestContextResult",
            value: { result: { case: "success", value: { requestContext: context } } },
          },
        },
      },
    });
    const made = requestContextReply(id, execId, context);
    expect(made).toStrictEqual(expected);
    expect(encodeClientMessage(made)).toStrictEqual(toBinary(AgentClientMessageSchema, expected));
  });
});
