import { describe, expect, it } from "vitest";
import { createToolNameMap, MAX_TOOL_NAME_LENGTH, sanitizeToolCallId, sanitizeToolName } from "./tool-names.js";

describe("tool names", () => {
  it("keeps safe names unchanged", () => {
    expect(sanitizeToolName("read_file-2")).toBe("read_file-2");
  });

  it("replaces unsafe characters and truncates to 64", () => {
    expect(sanitizeToolName("mcp.server/tool name")).toBe("mcp_server_tool_name");
    expect(sanitizeToolName("x".repeat(100))).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(sanitizeToolName("")).toBe("tool");
  });

  it("maps every caller name to a unique model name and back exactly", () => {
    const names = ["a.b", "a/b", "a_b", "é", "ü", "x".repeat(70), `${"x".repeat(64)}y`, "plain"];
    const map = createToolNameMap(names);
    const modelNames = names.map((name) => map.toModel(name));
    expect(new Set(modelNames).size).toBe(names.length);
    for (const modelName of modelNames) {
      expect(modelName).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
    expect(modelNames.map((modelName) => map.toCaller(modelName ?? ""))).toEqual(names);
    expect(map.entries.map(([caller]) => caller)).toEqual(names);
  });

  it("ignores duplicate declarations and unknown names", () => {
    const map = createToolNameMap(["read", "read"]);
    expect(map.entries).toHaveLength(1);
    expect(map.toCaller("write")).toBeUndefined();
    expect(map.toModel("write")).toBeUndefined();
  });

  it("sanitises tool-call ids and keeps them unique", () => {
    const taken = new Set<string>();
    expect(sanitizeToolCallId(" call_1\n", () => "abc", taken)).toBe("call_1_abc");
    expect(sanitizeToolCallId("", () => "abc", taken)).toBe("call_abc");
    const hexes = ["aaa", "bbb"];
    expect(sanitizeToolCallId("call 2", () => hexes.shift() ?? "", new Set(["call_2_aaa"]))).toBe("call_2_bbb");
    // Cursor's ids repeat across conversations; ours never do (the server finds parked turns by them).
    const ids = new Set(
      Array.from({ length: 1000 }, () =>
        sanitizeToolCallId("call_12345678", () => crypto.randomUUID().replaceAll("-", ""), taken),
      ),
    );
    expect(ids.size).toBe(1000);
  });

  it("gives thousands of names that sanitise alike distinct names, each mapped back, skipping names callers took", () => {
    // Every "y" + one unsafe character sanitises to "y_"; "y__3" is a caller's own name, which the suffixes go around.
    const alike = Array.from({ length: 5000 }, (_, i) => `y${String.fromCharCode(0x4e00 + i)}`);
    const callerNames = ["y__3", ...alike];
    const map = createToolNameMap(callerNames);
    const modelNames = map.entries.map(([, modelName]) => modelName);
    expect(new Set(modelNames).size).toBe(callerNames.length);
    expect(map.toModel("y__3")).toBe("y__3");
    expect(modelNames.slice(1, 5)).toEqual(["y_", "y__2", "y__4", "y__5"]);
    expect(modelNames.at(-1)).toBe("y__5001");
    for (const name of callerNames) expect(map.toCaller(map.toModel(name) ?? "")).toBe(name);
    expect(modelNames.every((name) => name.length <= 64)).toBe(true);
  });
});
