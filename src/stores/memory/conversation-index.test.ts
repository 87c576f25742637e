import { describe, expect, it } from "vitest";
import { createMemoryConversationIndex } from "./conversation-index.js";

describe("memory conversation index", () => {
  it("remembers keys and evicts the least recently used", async () => {
    const index = createMemoryConversationIndex({ maxEntries: 2 });
    await index.remember("f1", "c1");
    await index.remember("f2", "c2");
    expect(await index.lookup("f1")).toBe("c1");
    await index.remember("f3", "c3");
    expect(await index.lookup("f2")).toBeUndefined();
    expect(await index.lookup("f1")).toBe("c1");
    expect(await index.lookup("f3")).toBe("c3");
    expect(index.size()).toBe(2);
  });
});
