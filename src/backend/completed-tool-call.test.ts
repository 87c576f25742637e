import { create, fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type ToolCall, ToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import { completedToolOutcome } from "./completed-tool-call.js";

const call = (tool: ToolCall["tool"]) => create(ToolCallSchema, { tool } as never);

describe("completedToolOutcome", () => {
  it("reads the addendum's error and rejection cases of server-reported results", () => {
    const cases: [ToolCall, string, string][] = [
      [
        call({
          case: "readToolCall",
          value: { result: { result: { case: "error", value: { errorMessage: "File is binary" } } } },
        } as never),
        "error",
        "File is binary",
      ],
      [
        call({
          case: "editToolCall",
          value: { result: { result: { case: "rejected", value: { path: "a.ts", reason: "user said no" } } } },
        } as never),
        "rejected",
        "a.ts: user said no",
      ],
      [
        call({
          case: "editToolCall",
          value: { result: { result: { case: "fileNotFound", value: { path: "b.ts" } } } },
        } as never),
        "fileNotFound",
        "b.ts",
      ],
      [
        call({
          case: "editToolCall",
          value: {
            result: { result: { case: "error", value: { path: "c.ts", error: "raw", modelVisibleError: "no match" } } },
          },
        } as never),
        "error",
        "c.ts: no match",
      ],
      [
        call({
          case: "webSearchToolCall",
          value: { result: { result: { case: "rejected", value: { reason: "web search is off" } } } },
        } as never),
        "rejected",
        "web search is off",
      ],
      [
        call({
          case: "taskToolCall",
          value: { result: { result: { case: "error", value: { error: "subagent died" } } } },
        } as never),
        "error",
        "subagent died",
      ],
      [
        call({
          case: "updateTodosToolCall",
          value: { result: { result: { case: "error", value: { error: "bad id" } } } },
        } as never),
        "error",
        "bad id",
      ],
      [
        call({
          case: "readLintsToolCall",
          value: { result: { result: { case: "error", value: { errorMessage: "no LSP" } } } },
        } as never),
        "error",
        "no LSP",
      ],
    ];
    for (const [toolCall, status, text] of cases) {
      expect(completedToolOutcome(toolCall)).toMatchObject({ status, isError: true, text });
    }
  });

  it("treats success cases as no error and a missing result as none", () => {
    const success = call({
      case: "webSearchToolCall",
      value: { result: { result: { case: "success", value: { references: [{ title: "t", url: "u" }] } } } },
    } as never);
    expect(completedToolOutcome(success)).toEqual({
      tool: "webSearchToolCall",
      status: "success",
      isError: false,
      text: "",
    });
    expect(completedToolOutcome(call({ case: "readToolCall", value: {} } as never))?.status).toBe("none");
    expect(completedToolOutcome(create(ToolCallSchema))).toBeUndefined();
  });

  it("decodes an edit error straight from wire bytes (fields that used to be unknown)", () => {
    // ToolCall.edit_tool_call(12){ result(2){ error(7){ path(1)="x", error(2)="boom" } } }
    const editError = Buffer.from([0x0a, 0x01, 0x78, 0x12, 0x04, 0x62, 0x6f, 0x6f, 0x6d]);
    const result = Buffer.from([0x3a, editError.length, ...editError]);
    const editCall = Buffer.from([0x12, result.length, ...result]);
    const bytes = Buffer.from([0x62, editCall.length, ...editCall]);
    expect(completedToolOutcome(fromBinary(ToolCallSchema, bytes))).toMatchObject({ status: "error", text: "x: boom" });
  });
});
