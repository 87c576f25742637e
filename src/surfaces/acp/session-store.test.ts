import { describe, expect, it } from "vitest";
import { createMemoryResponseStore } from "../../stores/memory/response-store.js";
import { type AcpSessionRecord, acpSessionStoreOver, MAX_TRANSCRIPT_ENTRIES } from "./session-store.js";

describe("ACP sessions in the stored-records store", () => {
  it("round-trips a session, images included, and bounds the replay", async () => {
    const responses = createMemoryResponseStore();
    const store = acpSessionStoreOver(responses);
    const record: AcpSessionRecord = {
      id: "s1",
      cwd: "/w",
      mode: "plan",
      model: "gpt-5.2",
      config: { effort: "high", fast: true },
      title: "Fix the tests",
      messages: [
        {
          role: "user",
          parts: [
            { type: "text", text: "hi" },
            { type: "image", mimeType: "image/png", data: new Uint8Array([1, 2, 3]) },
          ],
        },
        { role: "assistant", text: "hello", reasoning: [], toolCalls: [] },
      ],
      transcript: Array.from({ length: MAX_TRANSCRIPT_ENTRIES + 5 }, (_, i) => ({ n: i })),
      updatedAt: Date.now(),
    };
    await store.put(record);
    const loaded = await store.get("s1");
    expect(loaded?.messages).toEqual(record.messages);
    expect(loaded).toMatchObject({ cwd: "/w", mode: "plan", model: "gpt-5.2", updatedAt: record.updatedAt });
    expect(loaded).toMatchObject({ config: { effort: "high", fast: true }, title: "Fix the tests" });
    expect(loaded?.transcript).toHaveLength(MAX_TRANSCRIPT_ENTRIES);
    expect(loaded?.transcript[0]).toEqual({ n: 5 });
    expect(await store.get("other")).toBeUndefined();
    expect(await responses.get("s1")).toBeUndefined();
  });
});
