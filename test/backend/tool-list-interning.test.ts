/**
 * A turn's tool list is interned (tool-list-cache.ts: turns with the same tools share one list, name map and request
 * context) only after its first Run's request was written, since interning serialises every tool's schema; the turn
 * then works with the shared list.
 */
import { describe, expect, it } from "vitest";
import { createAgentClient } from "../../src/backend/agent-client.js";
import { createToolListCache } from "../../src/backend/tool-list-cache.js";
import type { ClientTool } from "../../src/backend/types.js";
import type { CursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { collect, endOf, queryTool, toolCallsOf, useFixture } from "./harness.js";

describe("tool list interning", () => {
  const fx = useFixture({ transport: "http2" });

  it("interns after the first Run opened, and equal lists of two turns become one", async () => {
    const events: string[] = [];
    const interned: ClientTool[][] = [];
    const cache = createToolListCache();
    const api: CursorApi = {
      ...fx.api,
      openRun: (first, options) => {
        events.push("openRun");
        return fx.api.openRun(first, options);
      },
    };
    const client = createAgentClient({
      api,
      tokenSource: fx.tokens,
      conversationStore: fx.store,
      toolLists: {
        intern(tools) {
          events.push("intern");
          const list = cache.intern(tools);
          interned.push(list);
          return list;
        },
      },
    });
    for (const id of ["c-intern-1", "c-intern-2"]) {
      const turn = client.startTurn({
        model: "auto",
        conversationId: id,
        messages: [{ role: "user", content: '[[emu:tool lookup {"q":"x"}]]' }],
        tools: [queryTool()],
      });
      const events1 = await collect(turn.stream());
      expect(endOf(events1)).toBe("tool-calls");
      expect(toolCallsOf(events1).map((call) => call.toolName)).toEqual(["lookup"]);
      await turn.close("done");
    }
    expect(events).toEqual(["openRun", "intern", "openRun", "intern"]);
    expect(interned[1]).toBe(interned[0]);
  });
});
