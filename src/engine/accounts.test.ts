import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../backend/types.js";
import { createMemoryConversationIndex } from "../stores/memory/conversation-index.js";
import { ProxyError } from "../util/errors.js";
import { accountIndex, createAccountRouter } from "./accounts.js";
import type { BridgeEngine } from "./engine.js";
import type { EngineRequest, EngineTurn } from "./types.js";

/** An engine that records the turns it was given and answers with its own name as the model id. */
function fakeEngine(name: string, seen: string[]): BridgeEngine {
  const model = { id: name } as ModelInfo;
  return {
    startTurn: async (request: EngineRequest) => {
      seen.push(`${name}:${request.messages.length}`);
      return { route: "new", model, events: (async function* () {})() } as EngineTurn;
    },
    listModels: async () => [model],
    parkedCount: () => (name === "alice" ? 2 : 1),
    parkedTurns: () => [{ model: name, parkedAt: name === "alice" ? 2 : 1, pendingToolCalls: 1 }],
    closeAll: async () => {
      seen.push(`closed ${name}`);
    },
  };
}

const request = (account?: string): EngineRequest => ({
  model: "auto",
  instructions: [],
  messages: [],
  tools: [],
  options: { reasoning: false, reasoningEffort: undefined, toolChoice: "auto" },
  ...(account === undefined ? {} : { account }),
});

describe("account router", () => {
  it("runs each turn on its account's engine, and turns without one on the default account's", async () => {
    const seen: string[] = [];
    const router = createAccountRouter({
      engines: new Map([
        ["alice", fakeEngine("alice", seen)],
        ["bob", fakeEngine("bob", seen)],
      ]),
      defaultAccount: "bob",
    });
    await router.startTurn(request("alice"), AbortSignal.timeout(1000));
    await router.startTurn(request(), AbortSignal.timeout(1000));
    await router.startTurn(request("bob"), AbortSignal.timeout(1000));
    expect(seen).toEqual(["alice:0", "bob:0", "bob:0"]);
    expect((await router.listModels(undefined, "alice"))[0]?.id).toBe("alice");
    expect((await router.listModels())[0]?.id).toBe("bob");
    expect(router.parkedCount()).toBe(3);
    expect(router.parkedTurns?.().map((turn) => turn.model)).toEqual(["bob", "alice"]);
  });

  it("never falls back: an unknown account, or a default account without a login, is a 403 naming it", async () => {
    const seen: string[] = [];
    const router = createAccountRouter({
      engines: new Map([["alice", fakeEngine("alice", seen)]]),
      defaultAccount: "main",
    });
    const unknown = (await router
      .startTurn(request("carol"), AbortSignal.timeout(1000))
      .catch((e: unknown) => e)) as ProxyError;
    expect(unknown).toBeInstanceOf(ProxyError);
    expect(unknown).toMatchObject({ code: "permission_denied", status: 403, detail: "account_unknown" });
    expect(unknown.message).toContain("The Cursor account `carol`");
    const unnamed = (await router
      .startTurn(request(), AbortSignal.timeout(1000))
      .catch((e: unknown) => e)) as ProxyError;
    expect(unnamed.message).toContain("The default Cursor account `main`");
    await expect(router.listModels(undefined, "carol")).rejects.toMatchObject({ detail: "account_unknown" });
    // A model list runs no turn: without an account it comes from an account that is logged in.
    expect((await router.listModels())[0]?.id).toBe("alice");
    expect(seen).toEqual([]);
  });

  it("closes every engine, then the shared index once", async () => {
    const seen: string[] = [];
    const index = createMemoryConversationIndex();
    let closed = 0;
    const counted = {
      ...index,
      close: async () => {
        closed += 1;
      },
    };
    const router = createAccountRouter({
      engines: new Map([["alice", fakeEngine("alice", seen)]]),
      defaultAccount: "alice",
      index: counted,
    });
    await accountIndex(counted, "alice").close();
    expect(closed).toBe(0);
    await router.closeAll();
    expect(seen).toEqual(["closed alice"]);
    expect(closed).toBe(1);
  });
});

describe("accountIndex", () => {
  it("keeps the default account's keys as they were and prefixes every other account's", async () => {
    const index = createMemoryConversationIndex();
    await index.remember("key-1", "conv-old");
    expect(await accountIndex(index, "default").lookup("key-1")).toBe("conv-old");
    expect(await accountIndex(index, "alice").lookup("key-1")).toBeUndefined();
    await accountIndex(index, "alice").remember("key-1", "conv-alice");
    expect(await accountIndex(index, "alice").lookup("key-1")).toBe("conv-alice");
    expect(await accountIndex(index, "bob").lookup("key-1")).toBeUndefined();
    expect(await index.lookup("key-1")).toBe("conv-old");
  });
});
