import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import type { RequestLog } from "./access-log.js";
import { watchTurn } from "./request-io.js";

describe("watchTurn", () => {
  it("counts the web searches and fetches Cursor ran for the request, not the refused ones (#27)", async () => {
    const log: RequestLog = { requestId: "r", startedAt: 0 };
    const search = { type: "web-search" as const, toolCallId: "t", query: "q", references: [], error: "" };
    const fetch = { type: "web-fetch" as const, toolCallId: "f", url: "https://a.test/", markdown: "", error: "" };
    const events: BackendEvent[] = [
      { ...search, status: "completed" },
      { ...search, status: "rejected", error: "max_uses" },
      { ...search, status: "completed" },
      { ...fetch, status: "completed" },
      { ...fetch, status: "failed" },
      { type: "turn-end", reason: "stop" },
    ];
    events.forEach(watchTurn(log, () => 1));
    expect([log.webSearches, log.webFetches]).toEqual([2, 1]);
    const refused: RequestLog = { requestId: "x", startedAt: 0 };
    watchTurn(refused, () => 1)({ ...search, status: "rejected", error: "not offered", offered: false });
    expect([refused.webRefused, refused.webSearches]).toEqual([1, undefined]);
    const quiet: RequestLog = { requestId: "q", startedAt: 0 };
    watchTurn(quiet, () => 1)({ type: "turn-end", reason: "stop" });
    expect(quiet.webSearches).toBeUndefined();
  });
});
