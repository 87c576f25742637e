/**
 * native-tool-decode.ts on given frames: the emulator's and the captured ones, built layouts it reads (each equal to
 * `fromBinary`'s), the ones it leaves to `fromBinary`, invalid ones `fromBinary` still rejects, and mutated frames.
 * native-tool-decode.test.ts checks the layouts and generated messages.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type ExecReply, prepareCall } from "../../emulator/exec.js";
import type { PlannedCall } from "../../emulator/scripted-model.js";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { ExecClientMessageSchema } from "../../gen/agent/v1/exec_pb.js";
import { SERVER_MESSAGE } from "./native-tool-call-layouts.js";
import { decodeNativeToolMessage } from "./native-tool-decode.js";
import type { MessageLayout } from "./native-tool-layouts.js";
import { decodeServerMessage } from "./run-stream.js";

type Init = Record<string, unknown>;
const encode = (init: Init) => toBinary(AgentServerMessageSchema, create(AgentServerMessageSchema, init as never));
const update = (c: string, value: Init): Init => ({
  message: { case: "interactionUpdate", value: { message: { case: c, value } } },
});
const exec = (value: Init): Init => ({ message: { case: "execServerMessage", value } });
const toolCall = (c: string, value: Init) =>
  encode(update("toolCallStarted", { toolCall: { tool: { case: c, value } } }));
const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(" ", ""), "hex"));
const utf8 = (text: string) => Buffer.from(text, "utf8").toString("hex");
/** A length-delimited field: tag, length, contents (hex; each length under 128). */
const ld = (tag: string, contents: string) =>
  `${tag} ${(contents.replaceAll(" ", "").length / 2).toString(16).padStart(2, "0")} ${contents}`;
/** `AgentServerMessage { interaction_update { tool_call_started { call_id, tool_call { <contents> } } } }`. */
const started = (contents: string) => hex(ld("0a", ld("12", ld("0a", "63") + ld("12", contents))));
/** An exec holding `read_args { <contents> }`. */
const readArgs = (contents: string) => hex(ld("12", `08 01 ${ld("3a", contents)}`));
/** A ToolCall's `shell_tool_call.args { <contents> }`. */
const shellArgs = (contents: string) => started(ld("0a", ld("0a", contents)));
/** A ToolCall's `ls_tool_call` with the result's directory tree root holding `contents`. */
const lsTree = (contents: string) => started(ld("6a", ld("12", ld("0a", ld("0a", contents)))));

function expectSame(frame: Uint8Array) {
  const expected = fromBinary(AgentServerMessageSchema, frame);
  const decoded = decodeNativeToolMessage(frame);
  expect(decoded).toBeDefined();
  expect(decoded).toStrictEqual(expected);
  expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
}

describe("decodeNativeToolMessage on layouts it does not read", () => {
  const other: Array<[string, Uint8Array]> = [
    ["an unknown field in exec args", readArgs("0a 01 61 18 01")],
    ["a string field twice", readArgs("0a 01 61 0a 01 62")],
    ["fields out of order", readArgs("12 01 74 0a 01 61")],
    ["the exec id before the args", hex(ld("12", `08 01 7a 01 65 ${ld("3a", "0a 01 61")}`))],
    ["a message field twice", shellArgs("42 00 42 00")],
    ["a repeated field's values apart", shellArgs("2a 01 61 30 01 2a 01 62")],
    ["two cases of a oneof", started("0a 00 42 00")],
    ["an update's fields out of order", hex(ld("0a", `${ld("12", "1a 01 6d 0a 01 63")}`))],
    ["an update beside a later one", hex(ld("0a", `${ld("12", "")} ${ld("3a", "")}`))],
    ["another exec case", encode(exec({ id: 1, message: { case: "diagnosticsArgs", value: {} } }))],
    ["another ToolCall case", toolCall("readLintsToolCall", {})],
    ["an mcp_tool_call", toolCall("mcpToolCall", { args: { name: "n" } })],
    ["a result not read here", toolCall("webFetchToolCall", { result: {} })],
    ["another result case", toolCall("editToolCall", { result: { result: { case: "fileNotFound", value: {} } } })],
    ["another interaction update", encode(update("toolCallDelta", { callId: "c" }))],
    ["a text delta", encode(update("textDelta", { text: "hi" }))],
    ["a negative int32 (ten bytes)", toolCall("shellToolCall", { args: { timeout: -1 } })],
    ["an int32 over 2^31 - 1 in five bytes", shellArgs("18 80 80 80 80 08")],
    ["an exec id over 32 bits", hex(ld("12", "08 80 80 80 80 10"))],
    ["a varint over seven bytes", encode(update("toolCallStarted", { toolCall: { startedAtMs: 2n ** 50n } }))],
    ["a map key twice", lsTree(`${ld("2a", "0a 01 61 10 01")} ${ld("2a", "0a 01 61 10 02")}`)],
    ["a map entry's value before its key", lsTree(ld("2a", "10 01 0a 01 61"))],
    ["a map entry's value twice", lsTree(ld("2a", "0a 01 61 10 01 10 02"))],
    ["an empty message", new Uint8Array(0)],
  ];

  it.each(other)("leaves %s to fromBinary", (_name, frame) => {
    expect(() => fromBinary(AgentServerMessageSchema, frame)).not.toThrow();
    expect(decodeNativeToolMessage(frame)).toBeUndefined();
    expect(decodeServerMessage(frame, "Run")).toStrictEqual(fromBinary(AgentServerMessageSchema, frame));
  });

  it("leaves a map key __proto__ to fromBinary", () => {
    // fromBinary sets the map's prototype from it, an object toStrictEqual cannot compare.
    const frame = lsTree(ld("2a", `${ld("0a", utf8("__proto__"))} 10 01`));
    expect(decodeNativeToolMessage(frame)).toBeUndefined();
    const m = decodeServerMessage(frame, "Run").message;
    expect(m.case === "interactionUpdate" && m.value.message.case).toBe("toolCallStarted");
  });

  it("leaves invalid and truncated frames to fromBinary, which rejects them", () => {
    for (const frame of [
      readArgs("0a 01 ff"), // a path that is not UTF-8
      readArgs("0a 05 61"), // a path past the end
      hex(ld("12", "08 81")), // a truncated id
      shellArgs("18 85"), // a truncated timeout
      started("0a"), // a ToolCall case without its length
      lsTree(ld("2a", "0a 01 ff 10 01")), // a map key that is not UTF-8
      lsTree(ld("2a", "0a 01 61 18 01")), // an unknown field in a map entry
    ]) {
      expect(decodeNativeToolMessage(frame)).toBeUndefined();
      expect(() => decodeServerMessage(frame, "Run")).toThrow(/not a valid agent.v1.AgentServerMessage/);
    }
  });

  it("decodes mutated frames as fromBinary does, leaves them to it, or lets it reject them", () => {
    const frames = [
      toolCall("shellToolCall", {
        args: { command: "ls -la", simpleCommands: ["ls"], parsingResult: { executableCommands: [{ name: "ls" }] } },
        result: { result: { case: "success", value: { stdout: "a\n", exitCode: 0 } }, pid: 7 },
      }),
      toolCall("grepToolCall", {
        args: { pattern: "TODO", caseInsensitive: true },
        result: {
          result: {
            case: "success",
            value: { workspaceResults: { "/w": { result: { case: "files", value: { files: ["a", "b"] } } } } },
          },
        },
      }),
      encode(
        exec({ id: 3, execId: "e", message: { case: "lsArgs", value: { path: "/w", ignore: ["x"], timeoutMs: 9 } } }),
      ),
    ];
    let seed = 5;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let fast = 0;
    for (let i = 0; i < 3000; i++) {
      const frame = (frames[i % frames.length] as Uint8Array).slice();
      const at = rand(frame.length);
      const mutated = [
        () => {
          frame[at] = rand(256);
          return frame;
        },
        () => frame.subarray(0, at),
        () => Uint8Array.from([...frame.subarray(0, at), rand(256), ...frame.subarray(at)]),
      ][rand(3)]?.() as Uint8Array;
      let expected: unknown;
      try {
        expected = fromBinary(AgentServerMessageSchema, mutated);
      } catch {
        expect(decodeNativeToolMessage(mutated)).toBeUndefined();
        expect(() => decodeServerMessage(mutated, "Run")).toThrow(/not a valid agent.v1.AgentServerMessage/);
        continue;
      }
      const decoded = decodeNativeToolMessage(mutated);
      if (decoded !== undefined) {
        fast++;
        expect(decoded).toStrictEqual(expected);
      }
      expect(decodeServerMessage(mutated, "Run")).toStrictEqual(expected);
    }
    expect(fast).toBeGreaterThan(100);
  });
});

const NATIVE: Array<[PlannedCall & { kind: "native" }, Init]> = [
  [
    { kind: "native", native: "read", args: { path: "/work/ünï.ts" }, step: 0 },
    {
      case: "readResult",
      value: { result: { case: "success", value: { output: { case: "content", value: "a\nb" }, totalLines: 2 } } },
    },
  ],
  [
    { kind: "native", native: "ls", args: { path: "/work", ignore: ["node_modules"] }, step: 0 },
    {
      case: "lsResult",
      value: {
        result: {
          case: "success",
          value: {
            directoryTreeRoot: {
              absPath: "/work",
              childrenDirs: [{ absPath: "/work/src", childrenFiles: [{ name: "a.ts" }], numFiles: 1 }],
              childrenFiles: [{ name: "README.md" }],
              fullSubtreeExtensionCounts: { ".ts": 1, ".md": 1 },
              numFiles: 2,
            },
          },
        },
      },
    },
  ],
  [
    { kind: "native", native: "grep", args: { pattern: "TODO", path: "src", caseInsensitive: true }, step: 0 },
    {
      case: "grepResult",
      value: {
        result: {
          case: "success",
          value: {
            pattern: "TODO",
            path: "src",
            outputMode: "content",
            workspaceResults: {
              "/work": {
                result: {
                  case: "content",
                  value: { matches: [{ file: "a.ts", matches: [{ lineNumber: 3, content: "// TODO" }] }] },
                },
              },
            },
          },
        },
      },
    },
  ],
  [
    { kind: "native", native: "shell", args: { command: "ls -la | wc -l", timeout: 2000 }, step: 0 },
    {
      case: "shellResult",
      value: { result: { case: "success", value: { command: "ls", exitCode: 0, stdout: "3\n" } }, isBackground: false },
    },
  ],
  [
    { kind: "native", native: "write", args: { path: "/work/a.txt", fileText: "hello ✓\n" }, step: 0 },
    { case: "writeResult", value: { result: { case: "success", value: { path: "/work/a.txt", linesCreated: 1 } } } },
  ],
  [
    { kind: "native", native: "fetch", args: { url: "https://example.com/" }, step: 0 },
    { case: "fetchResult", value: { result: { case: "error", value: { url: "https://example.com/", error: "no" } } } },
  ],
];

/** What the emulator sends for each native call (src/emulator/turn-tools.ts). */
function emulatorFrames(): Array<[string, Uint8Array]> {
  return NATIVE.flatMap(([planned, reply]) => {
    const call = prepareCall(planned, { callId: "call_12345678", modelCallId: "3a21f953-0-abcd" }, undefined);
    const { callId, modelCallId } = call;
    const answer = create(ExecClientMessageSchema, { message: reply as never }).message as ExecReply;
    const completed = call.complete(answer).toolCall;
    return [
      [`${planned.native} partial`, encode(update("partialToolCall", { callId, modelCallId, toolCall: call.partial }))],
      [`${planned.native} started`, encode(update("toolCallStarted", { callId, modelCallId, toolCall: call.started }))],
      [`${planned.native} exec`, encode(exec({ id: 3, execId: "exec-3", message: call.args }))],
      [
        `${planned.native} completed`,
        encode(update("toolCallCompleted", { callId, modelCallId, toolCall: completed })),
      ],
    ] as Array<[string, Uint8Array]>;
  });
}

describe("decodeNativeToolMessage on the emulator's frames", () => {
  it.each(emulatorFrames())("decodes the emulator's %s exactly as fromBinary does", (_name, frame) => {
    expectSame(frame);
  });
});

describe("decodeNativeToolMessage on layouts it reads", () => {
  /** The layout of the field numbered `no` of `layout`. */
  const child = (layout: MessageLayout, no: number) => layout.byNumber.get(no)?.type as MessageLayout;
  // AgentServerMessage.interaction_update.tool_call_started.tool_call
  const toolCallLayout = child(child(child(SERVER_MESSAGE, 1), 2), 2);
  const CASES = toolCallLayout.fields.filter((f) => f.oneof === "tool").map((f) => f.localName);
  const fast: Array<[string, Uint8Array]> = [
    ...CASES.map((c): [string, Uint8Array] => [
      `a partial_tool_call with an empty ${c}`,
      encode(
        update("partialToolCall", { callId: "call_1", modelCallId: "m-1", toolCall: { tool: { case: c, value: {} } } }),
      ),
    ]),
    ["an empty ToolCall", encode(update("toolCallStarted", { callId: "c", toolCall: {} }))],
    [
      "a ToolCall with its id and times",
      encode(
        update("toolCallCompleted", {
          toolCall: {
            tool: { case: "lsToolCall", value: {} },
            toolCallId: "t",
            startedAtMs: 1n,
            completedAtMs: 2n ** 45n,
          },
        }),
      ),
    ],
    [
      "an update with message_started_at_ms",
      encode({
        message: {
          case: "interactionUpdate",
          value: {
            message: { case: "toolCallStarted", value: { callId: "c" } },
            messageStartedAtMs: 1_764_000_000_000n,
          },
        },
      }),
    ],
    [
      "a read with every output case",
      encode(
        update("toolCallCompleted", {
          toolCall: {
            tool: {
              case: "readToolCall",
              value: {
                args: { path: "p", offset: 0, limit: 10, includeLineNumbers: false },
                result: {
                  result: {
                    case: "success",
                    value: {
                      output: { case: "dataBlobId", value: new Uint8Array([1, 2]) },
                      readRange: {},
                      includeLineNumbers: true,
                    },
                  },
                },
              },
            },
          },
        }),
      ),
    ],
    ["shell_stream_args", encode(exec({ id: 1, message: { case: "shellStreamArgs", value: { command: "make" } } }))],
    [
      "an exec with its span context",
      encode(
        exec({
          id: 1,
          message: { case: "readArgs", value: { path: "p" } },
          spanContext: { traceId: "t", traceFlags: 1 },
        }),
      ),
    ],
    ["an exec without a case", encode(exec({ id: 4, execId: "e" }))],
    ["an empty exec", encode(exec({}))],
    ["grep args with a bool written as 2", started(ld("2a", ld("0a", "58 02")))],
    ["a non-minimal varint", started(ld("42", ld("0a", "10 85 00")))],
    ["a map entry without its value", lsTree(ld("2a", ld("0a", "61")))],
    ["a map entry without its key", lsTree(ld("2a", "10 07"))],
    ["an empty map entry", lsTree("2a 00")],
    ["a message map entry without its value", started(ld("2a", ld("12", ld("0a", ld("22", ld("0a", "61"))))))],
  ];

  it.each(fast)("decodes %s exactly as fromBinary does", (_name, frame) => {
    expectSame(frame);
  });
});

const VECTORS = fileURLToPath(
  new URL("../../../../shared/vectors/agent-toolcall-interaction-updates.captured-2026-01-26.json", import.meta.url),
);
const haveVectors = existsSync(VECTORS);
if (!haveVectors) console.warn(`native-tool-wire.test.ts: captured vectors skipped: ${VECTORS} is absent`);
/** The captured frames (each without its Connect envelope), each named by its update and `ToolCall` case. */
const vectors = (): Array<[string, Uint8Array]> =>
  (JSON.parse(readFileSync(VECTORS, "utf8")) as { vectors: Array<{ derived_connect_frame_hex: string }> }).vectors.map(
    (v) => {
      const frame = hex(v.derived_connect_frame_hex).subarray(5);
      const m = fromBinary(AgentServerMessageSchema, frame).message;
      const u = m.case === "interactionUpdate" ? m.value.message : undefined;
      const toolCase =
        u?.case === "partialToolCall" || u?.case === "toolCallStarted" || u?.case === "toolCallCompleted";
      return [`${u?.case} ${toolCase ? u.value.toolCall?.tool.case : ""}`, frame];
    },
  );

describe("decodeNativeToolMessage on captured traffic", () => {
  it.skipIf(!haveVectors)("decodes every captured vector (../shared/vectors) as fromBinary does, or leaves it", () => {
    const left: string[] = [];
    for (const [name, frame] of vectors()) {
      const expected = fromBinary(AgentServerMessageSchema, frame);
      const decoded = decodeNativeToolMessage(frame);
      if (decoded === undefined) left.push(name);
      else expect(decoded).toStrictEqual(expected);
      expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
    }
    // The results not read here: web fetch's and the MCP resource tools'.
    expect(left).toEqual([
      "toolCallCompleted webFetchToolCall",
      "toolCallCompleted listMcpResourcesToolCall",
      "toolCallCompleted readMcpResourceToolCall",
    ]);
  });
});
