import { type ClientRequest, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import type { RequestLog } from "./access-log.js";
import { watchClientGone, watchTurn } from "./request-io.js";

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

describe("watchClientGone", () => {
  /**
   * A real Node request and response; `watch` runs in the handler after the client left (destroyed its socket), after
   * the answer finished, or while the client waits, as runSurface's would. The client can `leave` or be answered later.
   */
  async function served(when: "after the client left" | "after the answer finished" | "while the client waits") {
    let gone = 0;
    let client: ClientRequest | undefined;
    const watching = new Promise<{ stop: () => void; answer: () => void }>((resolve) => {
      const server = createServer((incoming, outgoing) => {
        const watch = () => {
          const stop = watchClientGone({ env: { incoming, outgoing } } as unknown as Context, () => gone++);
          resolve({ stop, answer: () => outgoing.end("late") });
        };
        if (when === "after the client left") outgoing.once("close", watch);
        else if (when === "after the answer finished") outgoing.end("done", watch);
        else watch();
      });
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        client = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => res.resume());
        client.on("close", () => server.close());
        client.on("error", () => undefined);
        client.end();
        if (when === "after the client left") setTimeout(() => client?.destroy(), 50);
      });
    });
    const { stop, answer } = await watching;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
    return {
      gone: () => gone,
      stop,
      answer: async () => {
        answer();
        await settle();
      },
      leave: async () => {
        client?.destroy();
        await settle();
      },
    };
  }

  it("calls onGone at once for a client that left before the watch began", async () => {
    expect((await served("after the client left")).gone()).toBe(1);
  });

  it("does not for an answer that finished, before the watch or after it", async () => {
    expect((await served("after the answer finished")).gone()).toBe(0);
    const waiting = await served("while the client waits");
    await waiting.answer();
    expect(waiting.gone()).toBe(0);
  });

  it("calls it once when a waiting client leaves, and not once stopped", async () => {
    const waiting = await served("while the client waits");
    expect(waiting.gone()).toBe(0);
    await waiting.leave();
    expect(waiting.gone()).toBe(1);
    const stopped = await served("while the client waits");
    stopped.stop();
    await stopped.leave();
    expect(stopped.gone()).toBe(0);
  });

  it("outside the Node listener, follows the request's signal, aborted already or later", () => {
    let gone = 0;
    const aborted = new AbortController();
    aborted.abort();
    watchClientGone({ req: { raw: { signal: aborted.signal } } } as unknown as Context, () => gone++);
    expect(gone).toBe(1);
    const later = new AbortController();
    const stop = watchClientGone({ req: { raw: { signal: later.signal } } } as unknown as Context, () => gone++);
    later.abort();
    expect(gone).toBe(2);
    stop();
  });
});
