import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentClientMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { type RequestContext, RequestContextSchema } from "../../gen/agent/v1/request_context_pb.js";
import { encodeClientMessage } from "./run-stream.js";
import { encodeStreamingMessage } from "./streaming-encode.js";

type Init = MessageInitShape<typeof AgentClientMessageSchema>;

/** uint32 ids around every varint length boundary. */
const IDS = [0, 1, 127, 128, 300, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455, 268_435_456, 0xffff_ffff];

function blob(size: number): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => (i * 31 + 7) & 0xff);
}

/** Every layout the fast path writes, over the ids and blob sizes above. */
function fastLayouts(): Init[] {
  const layouts: Init[] = [{ message: { case: "clientHeartbeat", value: {} } }];
  for (const id of IDS) {
    layouts.push(
      { message: { case: "kvClientMessage", value: { id, message: { case: "setBlobResult", value: {} } } } },
      { message: { case: "kvClientMessage", value: { id, message: { case: "getBlobResult", value: {} } } } },
      {
        message: {
          case: "execClientControlMessage",
          value: { message: { case: "streamClose", value: { id } } },
        },
      },
      {
        message: {
          case: "execClientControlMessage",
          value: { message: { case: "heartbeat", value: { id } } },
        },
      },
    );
    for (const size of [0, 1, 127, 128, 70_000]) {
      layouts.push({
        message: {
          case: "kvClientMessage",
          value: { id, message: { case: "getBlobResult", value: { blobData: blob(size) } } },
        },
      });
    }
  }
  return layouts;
}

describe("encodeStreamingMessage", () => {
  it("writes the same bytes as toBinary for every fast layout, at every varint length", () => {
    const layouts = fastLayouts();
    expect(layouts.length).toBe(1 + IDS.length * 9);
    for (const init of layouts) {
      const message = create(AgentClientMessageSchema, init);
      const fast = encodeStreamingMessage(message);
      expect(
        fast,
        JSON.stringify(init, (_k, v) => (v instanceof Uint8Array ? v.length : v)),
      ).toBeDefined();
      expect(fast).toEqual(toBinary(AgentClientMessageSchema, message));
    }
  });

  it("leaves errors, unknown fields and every other message to toBinary", () => {
    const others: Init[] = [
      {
        message: {
          case: "kvClientMessage",
          value: { id: 3, message: { case: "setBlobResult", value: { error: { message: "disk full" } } } },
        },
      },
      {
        message: {
          case: "kvClientMessage",
          value: { id: 3, message: { case: "getBlobResult", value: { error: { message: "gone" } } } },
        },
      },
      { message: { case: "kvClientMessage", value: { id: 3 } } },
      {
        message: {
          case: "execClientControlMessage",
          value: { message: { case: "throw", value: { id: 4, error: "boom" } } },
        },
      },
      { message: { case: "conversationAction", value: { action: { case: "cancelAction", value: {} } } } },
      { message: { case: "runRequest", value: { conversationId: "c" } } },
      {},
    ];
    for (const init of others) {
      const message = create(AgentClientMessageSchema, init);
      expect(encodeStreamingMessage(message)).toBeUndefined();
      expect(encodeClientMessage(message)).toEqual(toBinary(AgentClientMessageSchema, message));
    }
    // A message read back with unknown fields keeps them: toBinary writes them, the fast path steps aside.
    const withUnknown = new Uint8Array([
      ...toBinary(
        AgentClientMessageSchema,
        create(AgentClientMessageSchema, {
          message: { case: "clientHeartbeat", value: {} },
        }),
      ),
      0xf8,
      0x01,
      0x05,
    ]);
    const decoded = fromBinary(AgentClientMessageSchema, withUnknown);
    expect(encodeStreamingMessage(decoded)).toBeUndefined();
    expect(encodeClientMessage(decoded)).toEqual(withUnknown);
  });

  it("round-trips through fromBinary", () => {
    const init: Init = {
      message: {
        case: "kvClientMessage",
        value: { id: 99, message: { case: "getBlobResult", value: { blobData: blob(300) } } },
      },
    };
    const bytes = encodeClientMessage(create(AgentClientMessageSchema, init));
    const back = fromBinary(AgentClientMessageSchema, bytes);
    expect(back.message.case).toBe("kvClientMessage");
    expect(back.message.value).toMatchObject({ id: 99, message: { case: "getBlobResult" } });
  });
});

describe("the request_context_result answer", () => {
  const text = (length: number) => "é😀a".repeat(Math.ceil(length / 3)).slice(0, length);
  /** Contexts whose encodings sit around the one-, two- and three-byte length boundaries, with and without tools. */
  function contexts(): RequestContext[] {
    const out: RequestContext[] = [create(RequestContextSchema, {})];
    for (const size of [0, 1, 100, 120, 125, 126, 127, 128, 300, 16_300, 16_400, 70_000]) {
      out.push(
        create(RequestContextSchema, {
          env: { osVersion: "linux 6.0", workspacePaths: ["/w"], shell: "bash", timeZone: "UTC", projectFolder: "/w" },
          ...(size === 0 ? {} : { cloudRule: text(size) }),
          tools: size % 2 === 0 ? [] : [{ name: "t", toolName: "t", description: text(size), inputSchema: blob(40) }],
        }),
      );
    }
    return out;
  }

  const answer = (id: number, execId: string, requestContext: RequestContext | undefined): Init => ({
    message: {
      case: "execClientMessage",
      value: {
        id,
        execId,
        message: {
          case: "requestContextResult",
          value: { result: { case: "success", value: requestContext === undefined ? {} : { requestContext } } },
        },
      },
    },
  });

  it("writes the bytes toBinary writes, for every context, id and exec id, twice each (the second from its kept bytes)", () => {
    let count = 0;
    for (const context of contexts()) {
      for (const id of IDS) {
        for (const execId of ["", "exec-1", text(130)]) {
          for (let time = 0; time < 2; time++) {
            const message = create(AgentClientMessageSchema, answer(id, execId, context));
            const fast = encodeStreamingMessage(message);
            expect(fast, `id ${id}, exec id ${execId.length}`).toBeDefined();
            const same = Buffer.from(fast ?? []).equals(Buffer.from(toBinary(AgentClientMessageSchema, message)));
            expect(same, `id ${id}, exec id ${execId.length}`).toBe(true);
            count++;
          }
        }
      }
    }
    expect(count).toBe(13 * IDS.length * 3 * 2);
  });

  it("leaves other exec answers, a missing context, an execution time and unknown fields to toBinary", () => {
    const context = create(RequestContextSchema, { cloudRule: "r" });
    const others: Init[] = [
      answer(1, "e", undefined),
      {
        message: {
          case: "execClientMessage",
          value: {
            id: 1,
            execId: "e",
            localExecutionTimeMs: 5n,
            message: {
              case: "requestContextResult",
              value: { result: { case: "success", value: { requestContext: context } } },
            },
          },
        },
      },
      {
        message: {
          case: "execClientMessage",
          value: {
            id: 1,
            message: { case: "requestContextResult", value: { result: { case: "error", value: { error: "no" } } } },
          },
        },
      },
      { message: { case: "execClientMessage", value: { id: 1, message: { case: "mcpResult", value: {} } } } },
      { message: { case: "execClientMessage", value: { id: 1 } } },
    ];
    for (const init of others) {
      const message = create(AgentClientMessageSchema, init);
      expect(encodeStreamingMessage(message)).toBeUndefined();
      expect(encodeClientMessage(message)).toEqual(toBinary(AgentClientMessageSchema, message));
    }
    const unknownInside = create(AgentClientMessageSchema, answer(1, "e", context));
    if (unknownInside.message.case === "execClientMessage") {
      unknownInside.message.value.$unknown = [{ no: 999, wireType: 0, data: new Uint8Array([1]) }];
    }
    expect(encodeStreamingMessage(unknownInside)).toBeUndefined();
    expect(encodeClientMessage(unknownInside)).toEqual(toBinary(AgentClientMessageSchema, unknownInside));
  });
});
