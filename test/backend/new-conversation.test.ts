/**
 * A turn of a conversation whose id the caller just minted (`newConversation`) reads nothing from the conversation
 * store: with the file store every new conversation cost a failed file open on the request's path (#30).
 */
import { describe, expect, it } from "vitest";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import type { ConversationStore } from "../../src/stores/types.js";
import { collect, endOf, textOf, useFixture, userTurn } from "./harness.js";

describe("a new conversation's turn", () => {
  const inner = createMemoryConversationStore();
  const loads: string[] = [];
  const store: ConversationStore = {
    ...inner,
    load: (conversationId) => {
      loads.push(conversationId);
      return inner.load(conversationId);
    },
    save: (record) => inner.save(record),
  };
  const fx = useFixture({ transport: "http2", store });

  it("skips the store read when the id was minted for it, and still saves its checkpoint", async () => {
    const events = await collect(
      fx.client.startTurn({ ...userTurn("minted", "hello"), newConversation: true }).stream(),
    );
    expect(textOf(events)).toBe("You said: hello");
    expect(endOf(events)).toBe("stop");
    expect(loads).toEqual([]);
    expect(await inner.load("minted")).toBeDefined();
  });

  it("reads the store otherwise", async () => {
    await collect(fx.client.startTurn(userTurn("given", "hello")).stream());
    expect(loads).toEqual(["given"]);
  });
});
