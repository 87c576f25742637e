import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ExecClientMessageSchema, ExecServerMessageSchema } from "../gen/agent/v1/exec_pb.js";
import type { ExecCase, ExecResultInit } from "./native-results.js";
import { execToolCallId, surfaceResults, toSurfaceExec } from "./surface-exec.js";
import { createToolNameMap } from "./tool-names.js";
import { encodeArgumentsMap } from "./value-codec.js";

const exec = (message: Parameters<typeof create<typeof ExecServerMessageSchema>>[1]): ExecCase =>
  create(ExecServerMessageSchema, message).message;
const real = (init: ExecResultInit) => create(ExecClientMessageSchema, { message: init }).message;
const names = createToolNameMap(["echo__echo"]);

describe("toSurfaceExec", () => {
  it("turns native args into plain data", () => {
    expect(
      toSurfaceExec(exec({ message: { case: "readArgs", value: { path: "a.ts", toolCallId: "c1" } } }), names),
    ).toEqual({
      kind: "read",
      path: "a.ts",
    });
    const shell = exec({
      message: { case: "shellArgs", value: { command: "ls", workingDirectory: "/w", timeout: 500 } },
    });
    expect(toSurfaceExec(shell, names)).toEqual({
      kind: "shell",
      command: "ls",
      workingDirectory: "/w",
      timeoutMs: 500,
    });
    expect(
      toSurfaceExec(
        exec({ message: { case: "grepArgs", value: { pattern: "", glob: "*.ts", toolCallId: "" } } }),
        names,
      ),
    ).toEqual({ kind: "glob", pattern: "*.ts", path: undefined });
    expect(toSurfaceExec(exec({ message: { case: "writeArgs", value: { path: "b", fileText: "x" } } }), names)).toEqual(
      { kind: "write", path: "b", text: "x" },
    );
    expect(execToolCallId(exec({ message: { case: "readArgs", value: { path: "a", toolCallId: "c1" } } }))).toBe("c1");
  });

  it("names an MCP call by the caller's tool name with JSON arguments", () => {
    const mcp = exec({
      message: {
        case: "mcpArgs",
        value: { name: "echo__echo", toolName: "echo__echo", args: encodeArgumentsMap({ text: "hi" }) },
      },
    });
    expect(toSurfaceExec(mcp, names)).toEqual({ kind: "mcp", toolName: "echo__echo", arguments: '{"text":"hi"}' });
  });

  it("leaves execs no surface runs to the rejection path", () => {
    expect(toSurfaceExec(exec({ message: { case: "computerUseArgs", value: {} } }), names)).toBeUndefined();
  });
});

describe("surfaceResults", () => {
  it("keeps a shell's real exit code", () => {
    const shell = exec({ message: { case: "shellArgs", value: { command: "make", workingDirectory: "/w" } } });
    const [result] = surfaceResults(shell, { kind: "output", content: "boom", isError: true, exitCode: 3 }).map(real);
    if (result?.case !== "shellResult" || result.value.result.case !== "failure") throw new Error("not a failure");
    expect(result.value.result.value.exitCode).toBe(3);
  });

  it("answers a rejection with the exec's typed rejected case", () => {
    const write = exec({ message: { case: "writeArgs", value: { path: "/w/a", fileText: "x" } } });
    const [result] = surfaceResults(write, { kind: "rejected", reason: "no" }).map(real);
    expect(result?.case === "writeResult" && result.value.result.case).toBe("rejected");
  });

  it("answers an MCP call with mcp_result content", () => {
    const mcp = exec({ message: { case: "mcpArgs", value: { name: "t", toolName: "t" } } });
    const [result] = surfaceResults(mcp, { kind: "output", content: "done", isError: false }).map(real);
    if (result?.case !== "mcpResult" || result.value.result.case !== "success") throw new Error("not a success");
    expect(result.value.result.value.content[0]?.content).toEqual({
      case: "text",
      value: expect.objectContaining({ text: "done" }),
    });
  });
});
