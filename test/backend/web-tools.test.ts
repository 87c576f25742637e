/**
 * Cursor-side web search and fetch (issue #27) between the agent client and the emulator, over both transports: the
 * client approves only offered tools within their limits, the emulator "runs" approved ones offline and counts them,
 * and the completed calls arrive as `web-search` / `web-fetch` events.
 */
import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../src/backend/types.js";
import { collect, endOf, textOf, useFixture, userTurn } from "./harness.js";

const webEvents = (events: BackendEvent[]) => events.filter((e) => e.type === "web-search" || e.type === "web-fetch");

describe.each(["http2", "http1"] as const)("web tools over %s", (transport) => {
  const fx = useFixture({ transport });

  it("approves an offered search, reports the emulator's 3 references and counts one search", async () => {
    const before = fx.emulator.stats().webSearches;
    const request = userTurn(`${transport}-search`, "[[emu:web-search cursor bridge]]");
    const events = await collect(
      fx.client.startTurn({ ...request, serverTools: { webSearch: { maxUses: 5 } } }).stream(),
    );
    const [search] = webEvents(events);
    expect(search).toMatchObject({ type: "web-search", query: "cursor bridge", status: "completed", error: "" });
    expect(search?.type === "web-search" && search.references.map((r) => r.url)).toEqual([
      "https://emulator.invalid/search/cursor-bridge/1",
      "https://emulator.invalid/search/cursor-bridge/2",
      "https://emulator.invalid/search/cursor-bridge/3",
    ]);
    expect(textOf(events)).toContain("(https://emulator.invalid/search/cursor-bridge/1)");
    expect(endOf(events)).toBe("stop");
    expect(fx.emulator.stats().webSearches).toBe(before + 1);
  });

  it("rejects the search when no search tool was offered: nothing is fetched and the model goes on", async () => {
    const before = fx.emulator.stats();
    const events = await collect(
      fx.client.startTurn(userTurn(`${transport}-nosearch`, "[[emu:web-search anything]]")).stream(),
    );
    expect(webEvents(events)).toMatchObject([{ type: "web-search", status: "rejected" }]);
    expect(textOf(events)).toMatch(/Web search "anything" was rejected: The request offered no web search tool/);
    expect(endOf(events)).toBe("stop");
    const after = fx.emulator.stats();
    expect([after.webSearches, after.webFetches]).toEqual([before.webSearches, before.webFetches]);
  });

  it("stops approving at max_uses: the second search of the turn is rejected", async () => {
    const before = fx.emulator.stats().webSearches;
    const request = userTurn(`${transport}-max`, "[[emu:web-search one]] [[emu:web-search two]]");
    const events = await collect(
      fx.client.startTurn({ ...request, serverTools: { webSearch: { maxUses: 1 } } }).stream(),
    );
    expect(webEvents(events).map((e) => e.type === "web-search" && e.status)).toEqual(["completed", "rejected"]);
    expect(textOf(events)).toContain("max_uses 1");
    expect(fx.emulator.stats().webSearches).toBe(before + 1);
  });

  it("fetches an offered URL and refuses a blocked domain", async () => {
    const before = fx.emulator.stats().webFetches;
    const request = userTurn(
      `${transport}-fetch`,
      "[[emu:web-fetch https://docs.example.test/a]] [[emu:web-fetch https://blocked.test/b]]",
    );
    const events = await collect(
      fx.client.startTurn({ ...request, serverTools: { webFetch: { blockedDomains: ["blocked.test"] } } }).stream(),
    );
    const [ok, refused] = webEvents(events);
    expect(ok).toMatchObject({ type: "web-fetch", url: "https://docs.example.test/a", status: "completed" });
    expect(ok?.type === "web-fetch" && ok.markdown).toContain("Offline copy of https://docs.example.test/a");
    expect(refused).toMatchObject({ type: "web-fetch", status: "rejected", error: expect.stringMatching(/blocked/) });
    expect(fx.emulator.stats().webFetches).toBe(before + 1);
  });
});
