import { readFileSync } from "node:fs";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { prepareCall } from "../../emulator/exec.js";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { decodeServerMessage } from "./run-stream.js";
import { decodeToolMessage } from "./tool-decode.js";

type Init = MessageInitShape<typeof AgentServerMessageSchema>;
const encode = (init: Init) => toBinary(AgentServerMessageSchema, create(AgentServerMessageSchema, init));
const update = (message: object): Init => ({ message: { case: "interactionUpdate", value: { message } } }) as Init;
const exec = (value: object): Init => ({ message: { case: "execServerMessage", value } }) as Init;
const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(" ", ""), "hex"));
const utf8 = (text: string) => Buffer.from(text, "utf8").toString("hex");
const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** A length-delimited field: tag, length, contents (hex). */
const ld = (tag: string, contents: string) =>
  `${tag} ${(contents.replaceAll(" ", "").length / 2).toString(16).padStart(2, "0")} ${contents}`;
/** A frame `AgentServerMessage { interaction_update { <case tag> { contents } } }` (each length under 128). */
const inUpdate = (caseTag: string, contents: string) => hex(ld("0a", ld(caseTag, contents)));

const mcp = (args: object) => ({ tool: { case: "mcpToolCall", value: { args } } });
const fullArgs = {
  name: "srv-lookup",
  toolName: "lookup",
  providerIdentifier: "srv",
  toolCallId: "toolu_01ÄÖ",
  args: { q: bytes(12), "ключ 🙂": bytes(300, 2), empty: new Uint8Array(0) },
};

/** What the emulator sends for one client tool call (src/emulator/turn-tools.ts). */
function emulatorFrames(): Array<[string, Uint8Array]> {
  const call = prepareCall(
    { kind: "mcp", name: "lookup", args: { q: "ünïcødé ✓", n: 2 ** 40, list: [1, "x", null], o: {} }, step: 0 },
    { callId: "call_12345678", modelCallId: "3a21f953-057c-4a82-8343-b80c53a70559-0-abcd" },
    { name: "srv-lookup", toolName: "lookup", providerIdentifier: "srv" } as never,
  );
  const { callId, modelCallId } = call;
  return [
    ["the emulator's tool_requests_listed", encode(update({ case: "toolRequestsListed", value: { callCount: 1 } }))],
    [
      "the emulator's partial_tool_call",
      encode(
        update({
          case: "partialToolCall",
          value: { callId, modelCallId, toolCall: call.partial, argsTextDelta: call.argsText.slice(0, 16) },
        }),
      ),
    ],
    [
      "the emulator's tool_call_started",
      encode(update({ case: "toolCallStarted", value: { callId, modelCallId, toolCall: call.started } })),
    ],
    ["the emulator's mcp_args exec", encode(exec({ id: 2, execId: "exec-2", message: call.args }))],
  ];
}

describe("decodeToolMessage", () => {
  const fast: Array<[string, Uint8Array]> = [
    ...emulatorFrames(),
    ["tool_requests_listed", encode(update({ case: "toolRequestsListed", value: { callCount: 3 } }))],
    ["empty tool_requests_listed", encode(update({ case: "toolRequestsListed", value: {} }))],
    ["the largest call_count", encode(update({ case: "toolRequestsListed", value: { callCount: 2 ** 32 - 1 } }))],
    ["a non-minimal call_count", inUpdate("da 01", "08 83 00")],
    [
      "partial_tool_call",
      encode(
        update({
          case: "partialToolCall",
          value: { callId: "call_1", modelCallId: "m-0", argsTextDelta: '{"q":"é🙂', toolCall: mcp({ name: "n" }) },
        }),
      ),
    ],
    [
      "partial_tool_call with long arguments",
      encode(
        update({
          case: "partialToolCall",
          value: {
            callId: "c",
            argsTextDelta: `{"q":"${"x".repeat(5000)}"}`,
            toolCall: mcp({ ...fullArgs, args: {} }),
          },
        }),
      ),
    ],
    ["empty partial_tool_call", encode(update({ case: "partialToolCall", value: {} }))],
    ["partial_tool_call with an empty ToolCall", encode(update({ case: "partialToolCall", value: { toolCall: {} } }))],
    [
      "partial_tool_call with an empty mcp_tool_call",
      encode(update({ case: "partialToolCall", value: { toolCall: { tool: { case: "mcpToolCall", value: {} } } } })),
    ],
    [
      "partial_tool_call with empty McpArgs",
      encode(update({ case: "partialToolCall", value: { callId: "c", toolCall: mcp({}) } })),
    ],
    [
      "tool_call_started",
      encode(
        update({ case: "toolCallStarted", value: { callId: "call_1", modelCallId: "m-0", toolCall: mcp(fullArgs) } }),
      ),
    ],
    ["tool_call_started without a ToolCall", encode(update({ case: "toolCallStarted", value: { callId: "c" } }))],
    ["empty tool_call_started", encode(update({ case: "toolCallStarted", value: {} }))],
    // Map entries missing their key or value: fromBinary reads the default.
    ["a map entry without its value", inUpdate("12", ld("12", ld("7a", ld("0a", ld("12", "0a 01 61")))))],
    ["a map entry without its key", inUpdate("12", ld("12", ld("7a", ld("0a", ld("12", "12 02 01 02")))))],
    ["an empty map entry", inUpdate("12", ld("12", ld("7a", ld("0a", "12 00"))))],
    ["mcp_args", encode(exec({ id: 7, execId: "exec-7", message: { case: "mcpArgs", value: fullArgs } }))],
    ["mcp_args without ids", encode(exec({ message: { case: "mcpArgs", value: { name: "n" } } }))],
    ["empty mcp_args", encode(exec({ message: { case: "mcpArgs", value: {} } }))],
    ["mcp_args with the largest id", encode(exec({ id: 2 ** 32 - 1, message: { case: "mcpArgs", value: fullArgs } }))],
  ];

  it.each(fast)("decodes %s exactly as fromBinary does", (_name, frame) => {
    const expected = fromBinary(AgentServerMessageSchema, frame);
    const decoded = decodeToolMessage(frame);
    expect(decoded).toBeDefined();
    expect(decoded).toStrictEqual(expected);
    expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
  });

  it("decodes generated tool calls exactly as fromBinary does", () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const text = () => ["", "a", "é", "🙂x", "call_42", "y".repeat(rand(200))][rand(6)] as string;
    const args = () => ({
      ...(rand(2) ? { name: text() } : {}),
      ...(rand(2) ? { toolName: text() } : {}),
      ...(rand(2) ? { providerIdentifier: text() } : {}),
      ...(rand(2) ? { toolCallId: text() } : {}),
      args: Object.fromEntries(Array.from({ length: rand(4) }, (_, i) => [`${text()}${i}`, bytes(rand(150), i)])),
    });
    for (let i = 0; i < 300; i++) {
      const ids = { ...(rand(2) ? { callId: text() } : {}), ...(rand(2) ? { modelCallId: text() } : {}) };
      const toolCall = rand(4) === 0 ? {} : { toolCall: mcp(args()) };
      const frame = [
        () => encode(update({ case: "partialToolCall", value: { ...ids, ...toolCall, argsTextDelta: text() } })),
        () => encode(update({ case: "toolCallStarted", value: { ...ids, ...toolCall } })),
        () => encode(exec({ id: rand(1000), execId: text(), message: { case: "mcpArgs", value: args() } })),
        () => encode(update({ case: "toolRequestsListed", value: { callCount: rand(5) } })),
      ][rand(4)]?.() as Uint8Array;
      const decoded = decodeToolMessage(frame);
      expect(decoded).toBeDefined();
      expect(decoded).toStrictEqual(fromBinary(AgentServerMessageSchema, frame));
    }
  });

  it("decodes the captured tool-call updates as fromBinary does", () => {
    const file = new URL(
      "../../../../shared/vectors/agent-toolcall-interaction-updates.captured-2026-01-26.json",
      import.meta.url,
    );
    const vectors = (
      JSON.parse(readFileSync(file, "utf8")) as { vectors: Array<{ derived_connect_frame_hex: string }> }
    ).vectors;
    expect(vectors.length).toBeGreaterThan(0);
    for (const vector of vectors) {
      // The Connect envelope (flags, 4-byte length) is not part of the message.
      const frame = hex(vector.derived_connect_frame_hex).subarray(5);
      const expected = fromBinary(AgentServerMessageSchema, frame);
      const decoded = decodeToolMessage(frame);
      if (decoded !== undefined) expect(decoded).toStrictEqual(expected);
      expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
    }
  });

  const other: Array<[string, Uint8Array]> = [
    [
      "a native ToolCall case",
      encode(
        update({
          case: "partialToolCall",
          value: { callId: "c", toolCall: { tool: { case: "shellToolCall", value: {} } } },
        }),
      ),
    ],
    [
      "an mcp_tool_call with its result",
      encode(
        update({
          case: "toolCallStarted",
          value: { toolCall: { tool: { case: "mcpToolCall", value: { args: { name: "n" }, result: {} } } } },
        }),
      ),
    ],
    [
      "a ToolCall with its own tool_call_id",
      encode(update({ case: "toolCallStarted", value: { toolCall: { ...mcp({ name: "n" }), toolCallId: "t" } } })),
    ],
    [
      "a ToolCall with started_at_ms",
      encode(update({ case: "partialToolCall", value: { toolCall: { ...mcp({}), startedAtMs: 5n } } })),
    ],
    [
      "tool_call_started beside message_started_at_ms",
      encode({
        message: {
          case: "interactionUpdate",
          value: { message: { case: "toolCallStarted", value: { callId: "c" } }, messageStartedAtMs: 7n },
        },
      }),
    ],
    ["tool_call_completed", encode(update({ case: "toolCallCompleted", value: { callId: "c", toolCall: mcp({}) } }))],
    ["call_id twice", inUpdate("3a", `0a 01 61 0a 01 62`)],
    ["model_call_id before call_id", inUpdate("3a", `22 01 6d 0a 01 61`)],
    ["an unknown field in partial_tool_call", inUpdate("3a", `0a 01 61 28 01`)],
    ["an unknown field in tool_call_started", inUpdate("12", `0a 01 61 20 01`)],
    ["the ToolCall twice", inUpdate("12", `12 00 12 00`)],
    ["McpArgs fields out of order", inUpdate("12", ld("12", ld("7a", ld("0a", "2a 01 62 0a 01 61"))))],
    [
      "a map key twice",
      inUpdate("12", ld("12", ld("7a", ld("0a", `${ld("12", "0a 01 61")} ${ld("12", "0a 01 61")}`)))),
    ],
    ["a map entry value before its key", inUpdate("12", ld("12", ld("7a", ld("0a", ld("12", "12 00 0a 01 61")))))],
    ["an unknown field in McpArgs", inUpdate("12", ld("12", ld("7a", ld("0a", "0a 01 61 30 01"))))],
    ["tool_requests_listed with an unknown field", inUpdate("da 01", "08 01 10 01")],
    ["a call_count twice", inUpdate("da 01", "08 01 08 02")],
    ["a call_count in six bytes (over the five read here)", inUpdate("da 01", "08 81 80 80 80 80 00")],
    ["a call_count over 32 bits", inUpdate("da 01", "08 80 80 80 80 10")],
    [
      "mcp_args with a span context",
      encode(exec({ id: 1, message: { case: "mcpArgs", value: { name: "n" } }, spanContext: {} })),
    ],
    ["exec id before the args", hex(ld("12", `08 01 ${ld("7a", "65")} 5a 00`))],
    ["another exec", encode(exec({ id: 3, message: { case: "lsArgs", value: {} } }))],
    ["an exec without a case", encode(exec({ id: 3 }))],
    ["a text delta", encode(update({ case: "textDelta", value: { text: "hi" } }))],
    ["empty message", new Uint8Array(0)],
  ];

  it.each(other)("leaves %s to fromBinary", (_name, frame) => {
    expect(() => fromBinary(AgentServerMessageSchema, frame)).not.toThrow();
    expect(decodeToolMessage(frame)).toBeUndefined();
    expect(decodeServerMessage(frame, "Run")).toStrictEqual(fromBinary(AgentServerMessageSchema, frame));
  });

  it("leaves a map key __proto__ to fromBinary", () => {
    // fromBinary sets the map's prototype from it (a Uint8Array), an object toStrictEqual cannot compare.
    const frame = inUpdate("12", ld("12", ld("7a", ld("0a", ld("12", ld("0a", utf8("__proto__")))))));
    expect(decodeToolMessage(frame)).toBeUndefined();
    const m = decodeServerMessage(frame, "Run").message;
    const started =
      m.case === "interactionUpdate" && m.value.message.case === "toolCallStarted" ? m.value.message.value : undefined;
    expect(started?.toolCall?.tool.case).toBe("mcpToolCall");
  });

  it("leaves invalid and truncated frames to fromBinary, which rejects them", () => {
    for (const frame of [
      inUpdate("3a", "0a 01 ff"), // a call id that is not UTF-8
      inUpdate("12", ld("12", ld("7a", ld("0a", ld("12", "0a 01 ff"))))), // a map key that is not UTF-8
      inUpdate("3a", "1a 05 61"), // arguments past the end
      inUpdate("da 01", "08 81"), // a truncated count
      hex(ld("12", "5a 02 0a 05")), // a name past the end of the args
      hex(ld("12", "5a 00 7a 01 ff")), // an exec id that is not UTF-8
      inUpdate("3a", "12 01 7a"), // a ToolCall case without its length
      inUpdate("12", ld("12", ld("7a", ld("0a", ld("12", "0a 01 61 18 01"))))), // an unknown field in a map entry
    ]) {
      expect(decodeToolMessage(frame)).toBeUndefined();
      expect(() => decodeServerMessage(frame, "Run")).toThrow(/not a valid agent.v1.AgentServerMessage/);
    }
  });
});
