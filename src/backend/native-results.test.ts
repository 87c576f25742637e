import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ExecClientMessageSchema, ExecServerMessageSchema } from "../gen/agent/v1/exec_pb.js";
import { type ExecCase, type ExecResultInit, rejectNativeExec, toNativeResult } from "./native-results.js";

const exec = (message: Parameters<typeof create<typeof ExecServerMessageSchema>>[1]): ExecCase =>
  create(ExecServerMessageSchema, message).message;

/** Materialises a result init as the real message, so the assertions see what goes on the wire. */
const real = (init: ExecResultInit) => create(ExecClientMessageSchema, { message: init }).message;

describe("toNativeResult", () => {
  it("turns read text into ReadSuccess with line count and size", () => {
    const [result] = toNativeResult(exec({ message: { case: "readArgs", value: { path: "/w/a" } } }), {
      content: "one\ntwo\n",
      isError: false,
    }).map(real);
    expect(result?.case).toBe("readResult");
    if (result?.case !== "readResult" || result.value.result.case !== "success") throw new Error("not success");
    expect(result.value.result.value.output).toEqual({ case: "content", value: "one\ntwo\n" });
    expect(result.value.result.value.totalLines).toBe(2);
    expect(result.value.result.value.fileSize).toBe(8n);
  });

  it("turns a read error into ReadResult.error", () => {
    const [result] = toNativeResult(exec({ message: { case: "readArgs", value: { path: "/w/a" } } }), {
      content: "ENOENT",
      isError: true,
    }).map(real);
    expect(result?.case === "readResult" && result.value.result.case).toBe("error");
  });

  it("turns shell text into ShellSuccess, errors into ShellFailure", () => {
    const shell = exec({ message: { case: "shellArgs", value: { command: "ls", workingDirectory: "/w" } } });
    const [ok] = toNativeResult(shell, { content: "a\nb", isError: false }).map(real);
    if (ok?.case !== "shellResult" || ok.value.result.case !== "success") throw new Error("not success");
    expect(ok.value.result.value).toMatchObject({ command: "ls", workingDirectory: "/w", exitCode: 0, stdout: "a\nb" });
    const [failed] = toNativeResult(shell, { content: "boom", isError: true }).map(real);
    expect(failed?.case === "shellResult" && failed.value.result.case).toBe("failure");
  });

  it("streams shell_stream results as start, stdout, exit", () => {
    const stream = exec({ message: { case: "shellStreamArgs", value: { command: "ls", workingDirectory: "/w" } } });
    const events = toNativeResult(stream, { content: "out", isError: false })
      .map(real)
      .map((r) => (r.case === "shellStream" ? r.value.event.case : r.case));
    expect(events).toEqual(["start", "stdout", "exit"]);
  });

  it("builds an LsDirectoryTreeNode from a path list", () => {
    const ls = exec({ message: { case: "lsArgs", value: { path: "/w" } } });
    const [result] = toNativeResult(ls, { content: "/w/a.ts\n/w/src/b.ts\n/w/src/deep/c.md\n", isError: false }).map(
      real,
    );
    if (result?.case !== "lsResult" || result.value.result.case !== "success") throw new Error("not success");
    const root = result.value.result.value.directoryTreeRoot;
    expect(root?.absPath).toBe("/w");
    expect(root?.childrenFiles.map((f) => f.name)).toEqual(["a.ts"]);
    expect(root?.childrenDirs[0]?.absPath).toBe("/w/src");
    expect(root?.childrenDirs[0]?.childrenDirs[0]?.absPath).toBe("/w/src/deep");
    expect(root?.numFiles).toBe(3);
    expect(root?.fullSubtreeExtensionCounts).toEqual({ ".ts": 2, ".md": 1 });
  });

  it("parses ripgrep and OpenCode grep output into content matches", () => {
    const grep = exec({ message: { case: "grepArgs", value: { pattern: "x", path: "/w" } } });
    for (const text of [
      "/w/a.ts:3:let x\n/w/a.ts:9:x()\n/w/b.ts:1:x",
      "Found 3 matches\n/w/a.ts:\n  Line 3: let x\n  Line 9: x()\n/w/b.ts:\n  Line 1: x",
    ]) {
      const [result] = toNativeResult(grep, { content: text, isError: false }).map(real);
      if (result?.case !== "grepResult" || result.value.result.case !== "success") throw new Error("not success");
      const union = result.value.result.value.workspaceResults["/w"]?.result;
      if (union?.case !== "content") throw new Error(`not content: ${union?.case}`);
      expect(union.value.matches.map((m) => [m.file, m.matches.map((l) => l.lineNumber)])).toEqual([
        ["/w/a.ts", [3, 9]],
        ["/w/b.ts", [1]],
      ]);
      expect(union.value.totalMatchedLines).toBe(3);
    }
  });

  it("answers a glob-style grep with a file list", () => {
    const glob = exec({ message: { case: "grepArgs", value: { pattern: "", glob: "*.ts" } } });
    const [result] = toNativeResult(glob, { content: "/w/a.ts\n/w/b.ts", isError: false }).map(real);
    if (result?.case !== "grepResult" || result.value.result.case !== "success") throw new Error("not success");
    const union = result.value.result.value.workspaceResults["."]?.result;
    expect(union?.case === "files" && union.value.files).toEqual(["/w/a.ts", "/w/b.ts"]);
  });

  it("turns fetch and write outputs into their success results", () => {
    const [fetch] = toNativeResult(exec({ message: { case: "fetchArgs", value: { url: "https://x" } } }), {
      content: "# page",
      isError: false,
    }).map(real);
    expect(
      fetch?.case === "fetchResult" && fetch.value.result.case === "success" && fetch.value.result.value.statusCode,
    ).toBe(200);
    const [write] = toNativeResult(
      exec({ message: { case: "writeArgs", value: { path: "/w/a", fileText: "1\n2\n3" } } }),
      {
        content: "ok",
        isError: false,
      },
    ).map(real);
    if (write?.case !== "writeResult" || write.value.result.case !== "success") throw new Error("not success");
    expect(write.value.result.value).toMatchObject({ path: "/w/a", linesCreated: 3, fileSize: 5 });
  });
});

describe("rejectNativeExec", () => {
  it("answers each exec with its typed rejection", () => {
    const cases: Array<[ExecCase, string, string | undefined]> = [
      [exec({ message: { case: "readArgs", value: { path: "/a" } } }), "readResult", "rejected"],
      [exec({ message: { case: "writeArgs", value: { path: "/a" } } }), "writeResult", "rejected"],
      [exec({ message: { case: "deleteArgs", value: { path: "/a" } } }), "deleteResult", "rejected"],
      [exec({ message: { case: "lsArgs", value: { path: "/a" } } }), "lsResult", "rejected"],
      [exec({ message: { case: "grepArgs", value: { pattern: "x" } } }), "grepResult", "error"],
      [exec({ message: { case: "fetchArgs", value: { url: "u" } } }), "fetchResult", "error"],
      [exec({ message: { case: "shellArgs", value: { command: "c" } } }), "shellResult", "rejected"],
      [
        exec({ message: { case: "backgroundShellSpawnArgs", value: { command: "c" } } }),
        "backgroundShellSpawnResult",
        "rejected",
      ],
      [exec({ message: { case: "writeShellStdinArgs", value: {} } }), "writeShellStdinResult", "error"],
      [exec({ message: { case: "diagnosticsArgs", value: {} } }), "diagnosticsResult", undefined],
      [exec({ message: { case: "computerUseArgs", value: {} } }), "computerUseResult", "error"],
      [exec({ message: { case: "recordScreenArgs", value: {} } }), "recordScreenResult", "failure"],
      [exec({ message: { case: "listMcpResourcesExecArgs", value: {} } }), "listMcpResourcesExecResult", "rejected"],
      [
        exec({ message: { case: "readMcpResourceExecArgs", value: { uri: "r://x" } } }),
        "readMcpResourceExecResult",
        "rejected",
      ],
    ];
    for (const [args, resultCase, inner] of cases) {
      const [result] = rejectNativeExec(args, "no").map(real);
      expect(result?.case).toBe(resultCase);
      const value = result?.value as { result?: { case?: string } } | undefined;
      expect(value?.result?.case).toBe(inner);
    }
    const stream = rejectNativeExec(exec({ message: { case: "shellStreamArgs", value: { command: "c" } } }), "no").map(
      real,
    );
    expect(stream[0]?.case === "shellStream" && stream[0].value.event.case).toBe("rejected");
  });
});
