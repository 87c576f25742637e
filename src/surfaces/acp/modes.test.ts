import { describe, expect, it } from "vitest";
import type { SurfaceExec } from "../../backend/types.js";
import { modeRefusal } from "./modes.js";

const EXECS: Record<SurfaceExec["kind"], SurfaceExec> = {
  read: { kind: "read", path: "a.ts" },
  write: { kind: "write", path: "a.ts", text: "x" },
  delete: { kind: "delete", path: "a.ts" },
  shell: { kind: "shell", command: "make", workingDirectory: "", timeoutMs: undefined },
  ls: { kind: "ls", path: "." },
  grep: { kind: "grep", pattern: "x", path: undefined, glob: undefined, caseInsensitive: false },
  glob: { kind: "glob", pattern: "*.ts", path: undefined },
  fetch: { kind: "fetch", url: "https://example.com" },
  mcp: { kind: "mcp", toolName: "db__update", arguments: "{}" },
};

/** The exec kinds `mode` refuses (an MCP tool not annotated read-only, or one that is). */
function refused(mode: "agent" | "ask" | "plan", readOnlyTool: boolean): string[] {
  return Object.values(EXECS)
    .filter((exec) => modeRefusal(mode, exec, readOnlyTool) !== undefined)
    .map((exec) => exec.kind);
}

describe("modeRefusal", () => {
  it("refuses nothing in Agent mode (the permission prompts guard it)", () => {
    expect(refused("agent", false)).toEqual([]);
  });

  it("refuses in Ask mode whatever may change something: writes, deletes, commands, MCP tools not read-only", () => {
    expect(refused("ask", false)).toEqual(["write", "delete", "shell", "mcp"]);
    expect(refused("ask", true)).toEqual(["write", "delete", "shell"]);
  });

  it("refuses writes and deletes in Plan mode; commands and MCP tools are the user's to allow", () => {
    expect(refused("plan", false)).toEqual(["write", "delete"]);
  });

  it("says which mode refused what, and how to get it done", () => {
    expect(modeRefusal("ask", EXECS.mcp, false)).toBe(
      "The session is in Ask mode, which answers without changing anything: calling the MCP tool db__update (not " +
        "annotated read-only) was refused without asking the user. The user can switch the session to Agent mode for it.",
    );
  });
});
