import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ExecServerMessageSchema } from "../gen/agent/v1/exec_pb.js";
import { redirectNativeExec } from "./native-redirect.js";
import type { ExecCase } from "./native-results.js";
import type { ClientTool } from "./types.js";

const tool = (name: string, properties: string[] = []): ClientTool => ({
  name,
  description: name,
  inputSchema: { type: "object", properties: Object.fromEntries(properties.map((p) => [p, { type: "string" }])) },
});

const exec = (message: Parameters<typeof create<typeof ExecServerMessageSchema>>[1]): ExecCase =>
  create(ExecServerMessageSchema, message).message;

const args = (text: string | undefined) => JSON.parse(text ?? "null") as unknown;

describe("redirectNativeExec", () => {
  it("sends shell to bash with the names its schema declares", () => {
    const shell = exec({
      message: { case: "shellArgs", value: { command: "ls -la", workingDirectory: "/w", toolCallId: "call_1" } },
    });
    const r = redirectNativeExec(shell, [tool("Bash", ["command", "description", "workdir"])]);
    expect(r?.toolName).toBe("Bash");
    expect(r?.nativeToolCallId).toBe("call_1");
    expect(args(r?.arguments)).toEqual({ command: "ls -la", description: "Run: ls -la", workdir: "/w" });
  });

  it("runs a command in Cursor's folder on a tool without a folder argument, by changing to it first", () => {
    const shell = exec({
      message: { case: "shellArgs", value: { command: "ls -la", workingDirectory: "/w/it's here" } },
    });
    const r = redirectNativeExec(shell, [tool("bash", ["command"])]);
    expect(args(r?.arguments)).toEqual({ command: "cd '/w/it'\\''s here' && ls -la" });
    const cmd = redirectNativeExec(shell, [tool("shell", ["cmd"])]);
    expect(args(cmd?.arguments)).toEqual({ cmd: "cd '/w/it'\\''s here' && ls -la" });
  });

  it("prefers bash over shell and drops optional arguments the schema lacks", () => {
    const shell = exec({ message: { case: "shellStreamArgs", value: { command: "pwd" } } });
    const r = redirectNativeExec(shell, [tool("shell", ["command"]), tool("bash", ["command"])]);
    expect(r?.toolName).toBe("bash");
    expect(args(r?.arguments)).toEqual({ command: "pwd" });
  });

  it("maps read and write paths onto filePath/file_path/path", () => {
    const read = exec({ message: { case: "readArgs", value: { path: "/w/a.ts" } } });
    expect(args(redirectNativeExec(read, [tool("read", ["filePath"])])?.arguments)).toEqual({ filePath: "/w/a.ts" });
    expect(args(redirectNativeExec(read, [tool("read_file", ["file_path"])])?.arguments)).toEqual({
      file_path: "/w/a.ts",
    });
    const write = exec({ message: { case: "writeArgs", value: { path: "/w/b.ts", fileText: "x" } } });
    expect(args(redirectNativeExec(write, [tool("write", ["filePath", "content"])])?.arguments)).toEqual({
      filePath: "/w/b.ts",
      content: "x",
    });
  });

  it("maps ls to glob, and a glob-style grep to glob", () => {
    const ls = exec({ message: { case: "lsArgs", value: { path: "/w" } } });
    expect(args(redirectNativeExec(ls, [tool("glob", ["pattern", "path"])])?.arguments)).toEqual({
      pattern: "**/*",
      path: "/w",
    });
    expect(args(redirectNativeExec(ls, [tool("list", ["path"])])?.arguments)).toEqual({ path: "/w" });
    const glob = exec({ message: { case: "grepArgs", value: { pattern: "", glob: "*.ts", path: "/w" } } });
    const r = redirectNativeExec(glob, [tool("grep", ["pattern"]), tool("glob", ["pattern", "path"])]);
    expect(r?.toolName).toBe("glob");
    expect(args(r?.arguments)).toEqual({ pattern: "*.ts", path: "/w" });
  });

  it("maps grep with its include glob", () => {
    const grep = exec({ message: { case: "grepArgs", value: { pattern: "TODO", glob: "*.ts" } } });
    expect(args(redirectNativeExec(grep, [tool("grep", ["pattern", "path", "include"])])?.arguments)).toEqual({
      pattern: "TODO",
      include: "*.ts",
    });
  });

  it("maps fetch to webfetch with markdown format when declared", () => {
    const fetch = exec({ message: { case: "fetchArgs", value: { url: "https://example.com" } } });
    const r = redirectNativeExec(fetch, [tool("webfetch", ["url", "format"])]);
    expect(args(r?.arguments)).toEqual({ url: "https://example.com", format: "markdown" });
  });

  it("returns undefined when no equivalent tool exists", () => {
    const del = exec({ message: { case: "deleteArgs", value: { path: "/w/a" } } });
    expect(redirectNativeExec(del, [tool("bash", ["command"])])).toBeUndefined();
    const spawn = exec({ message: { case: "backgroundShellSpawnArgs", value: { command: "sleep 1" } } });
    expect(redirectNativeExec(spawn, [tool("bash", ["command"])])).toBeUndefined();
  });
});
