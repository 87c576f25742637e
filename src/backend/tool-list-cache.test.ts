import { describe, expect, it } from "vitest";
import { createToolListCache } from "./tool-list-cache.js";
import type { ClientTool } from "./types.js";

const tool = (name: string, description = "d"): ClientTool => ({
  name,
  description,
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
});

describe("createToolListCache", () => {
  it("returns the first list for an equal later list", () => {
    const cache = createToolListCache();
    const first = [tool("read"), tool("write")];
    expect(cache.intern(first)).toBe(first);
    expect(cache.intern([tool("read"), tool("write")])).toBe(first);
  });

  it("keeps lists that differ in order, description or schema apart", () => {
    const cache = createToolListCache();
    const base = [tool("read"), tool("write")];
    cache.intern(base);
    const reordered = [tool("write"), tool("read")];
    const described = [tool("read", "other"), tool("write")];
    const schema = [{ ...tool("read"), inputSchema: { type: "object" } }, tool("write")];
    expect(cache.intern(reordered)).toBe(reordered);
    expect(cache.intern(described)).toBe(described);
    expect(cache.intern(schema)).toBe(schema);
  });

  it("drops the least recently used list beyond its capacity", () => {
    const cache = createToolListCache(2);
    const a = [tool("a")];
    const b = [tool("b")];
    cache.intern(a);
    cache.intern(b);
    cache.intern([tool("a")]);
    cache.intern([tool("c")]);
    expect(cache.intern([tool("a")])).toBe(a);
    const laterB = [tool("b")];
    expect(cache.intern(laterB)).toBe(laterB);
  });
});
