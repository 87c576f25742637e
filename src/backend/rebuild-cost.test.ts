/**
 * A rebuild from history does work linear in the number of messages (a 10,000-message history took 13 s
 * to start). Counted, not timed: history elements read and blobs stored per message.
 */
import { describe, expect, it } from "vitest";
import { blobIdOf } from "../stores/blob-id.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import type { BlobStore } from "../stores/types.js";
import { buildRootState, toolNamesOf } from "./run-request.js";
import type { HistoryMessage } from "./types.js";

/** A history of `pairs` tool round trips plus chat, with one system message. */
function toolHeavyHistory(pairs: number): HistoryMessage[] {
  const history: HistoryMessage[] = [{ role: "system", content: "sys" }];
  for (let i = 0; i < pairs; i++) {
    history.push({ role: "user", content: `question ${i}` });
    history.push({
      role: "assistant",
      content: "",
      toolCalls: [{ id: `call_${i}`, name: `tool_${i % 7}`, arguments: `{"i":${i}}` }],
    });
    history.push({ role: "tool", toolCallId: `call_${i}`, content: `result ${i}` });
  }
  return history;
}

/** The history behind a proxy counting element reads. */
function counted(history: HistoryMessage[]): { history: HistoryMessage[]; reads: () => number } {
  let reads = 0;
  const proxy = new Proxy(history, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { history: proxy, reads: () => reads };
}

/** A blob store counting puts. */
function countingStore(): { store: BlobStore; puts: () => number } {
  const store = createBlobStore();
  let puts = 0;
  const put = store.put.bind(store);
  store.put = (data) => {
    puts++;
    return put(data);
  };
  return { store, puts: () => puts };
}

describe("rebuild cost", () => {
  it("reads each history message a constant number of times, however long the history", () => {
    const perMessage = [300, 3_000].map((pairs) => {
      const { history, reads } = counted(toolHeavyHistory(pairs));
      buildRootState(history, createBlobStore());
      return reads() / history.length;
    });
    // Linear: the same small number of reads per message at both sizes (a lookup per tool message was quadratic).
    expect(perMessage[1]).toBeLessThanOrEqual(4);
    expect(perMessage[1]).toBeCloseTo(perMessage[0] ?? 0, 1);
  });

  it("stores one blob per message, each under its SHA-256, with tool names resolved", () => {
    const history = toolHeavyHistory(1_000);
    const { store, puts } = countingStore();
    const state = buildRootState(history, store);
    expect(puts()).toBe(history.length);
    expect(state.rootPromptMessagesJson).toHaveLength(history.length);
    const third = state.rootPromptMessagesJson[3] as Uint8Array;
    const toolMessage = JSON.parse(new TextDecoder().decode(store.get(third)));
    expect(toolMessage).toMatchObject({ role: "tool", content: [{ toolCallId: "call_0", toolName: "tool_0" }] });
    expect(blobIdOf(store.get(third) as Uint8Array)).toEqual(third);
  });

  it("names a tool after the first assistant call with that id", () => {
    const names = toolNamesOf([
      { role: "assistant", content: "", toolCalls: [{ id: "a", name: "first", arguments: "{}" }] },
      { role: "assistant", content: "", toolCalls: [{ id: "a", name: "second", arguments: "{}" }] },
    ]);
    expect(names.get("a")).toBe("first");
  });
});
