import { describe, expect, it } from "vitest";
import { hiddenClassCheck } from "../../test/support/hidden-class.js";
import type { AgentTurn, AgentTurnStatus, BackendEvent } from "../backend/types.js";
import { createParkedTurnRegistry } from "./parked-turns.js";

const origin = { requestKey: "k", callsKey: "c", ranAs: "m", toolNames: "" };

function fakeTurn(ids: string[], status: AgentTurnStatus = "parked") {
  const closed: string[] = [];
  let onEnd: (() => void) | undefined;
  const turn: AgentTurn & { status: AgentTurnStatus } = {
    conversationId: "c1",
    status,
    pendingToolCallIds: ids,
    stream: () => (async function* (): AsyncGenerator<BackendEvent> {})(),
    resume: () => (async function* (): AsyncGenerator<BackendEvent> {})(),
    close: async (reason?: string) => {
      closed.push(reason ?? "");
      turn.status = "ended";
      onEnd?.();
    },
    onEnd: (listener) => {
      onEnd = listener;
    },
  };
  return { turn, closed, listening: () => onEnd !== undefined };
}

/** Timers on a manual clock: `advance` moves it and runs the timers that came due, in order. */
function manualTimers() {
  let at = 0;
  const pending: Array<{ fn: () => void; dueAt: number; cleared: boolean }> = [];
  const options = {
    clock: () => at,
    setTimer: (fn: () => void, ms: number) => {
      const handle = { fn, dueAt: at + ms, cleared: false };
      pending.push(handle);
      return handle;
    },
    clearTimer: (handle: unknown) => {
      (handle as { cleared: boolean }).cleared = true;
    },
  };
  return {
    /** The registry's clock and timer options. */
    options,
    armed: () => pending.filter((h) => !h.cleared).length,
    advance: (ms: number) => {
      at += ms;
      for (;;) {
        const due = pending.filter((h) => !h.cleared && h.dueAt <= at).sort((a, b) => a.dueAt - b.dueAt)[0];
        if (due === undefined) return;
        due.cleared = true;
        due.fn();
      }
    },
  };
}

describe("parked turn registry", () => {
  it("releaseOwned takes out every turn of one owner and leaves the others parked", () => {
    const registry = createParkedTurnRegistry();
    const a = fakeTurn(["a1", "a2"]);
    const b = fakeTurn(["b1"]);
    const c = fakeTurn(["c1"]);
    registry.park({ turn: a.turn, conversationId: "ca", model: "m", origin: { ...origin, owner: "key-1" } });
    registry.park({ turn: b.turn, conversationId: "cb", model: "m", origin: { ...origin, owner: "key-2" } });
    registry.park({ turn: c.turn, conversationId: "cc", model: "m", origin: { ...origin, owner: "key-1" } });
    const owned = registry.releaseOwned("key-1");
    expect(owned.map((entry) => entry.conversationId)).toEqual(["ca", "cc"]);
    expect(registry.size()).toBe(1);
    expect(registry.take(["a1", "a2"])).toBeUndefined();
    // The registry lets them go; closing them is the caller's (the engine's) part.
    expect(a.closed).toEqual([]);
    expect(registry.take(["b1"])?.conversationId).toBe("cb");
  });

  it("hands a parked turn to exactly one request whose tool results answer every pending id", () => {
    const registry = createParkedTurnRegistry();
    const { turn } = fakeTurn(["call_1", "call_2"]);
    registry.park({ turn, conversationId: "c1", model: "m", origin });
    expect(registry.size()).toBe(1);
    expect(registry.take(["call_2", "call_1"])?.turn).toBe(turn);
    expect(registry.take(["call_2", "call_1"])).toBeUndefined();
    expect(registry.size()).toBe(0);
  });

  it("lists what is parked, oldest first, with the model, when it parked and how many calls it waits for", () => {
    let now = 1000;
    const registry = createParkedTurnRegistry({ now: () => now });
    registry.park({ turn: fakeTurn(["call_1", "call_2"]).turn, conversationId: "c1", model: "m1", origin });
    now = 2000;
    registry.park({ turn: fakeTurn(["call_3"]).turn, conversationId: "c2", model: "m2", origin });
    expect(registry.list()).toEqual([
      { model: "m1", parkedAt: 1000, pendingToolCalls: 2 },
      { model: "m2", parkedAt: 2000, pendingToolCalls: 1 },
    ]);
    registry.take(["call_1", "call_2"]);
    expect(registry.list().map((entry) => entry.model)).toEqual(["m2"]);
  });

  it("refuses a partial or unknown set of ids", () => {
    const registry = createParkedTurnRegistry();
    const { turn } = fakeTurn(["call_1", "call_2"]);
    registry.park({ turn, conversationId: "c1", model: "m", origin });
    expect(registry.take(["call_1"])).toBeUndefined();
    expect(registry.take(["call_9"])).toBeUndefined();
    expect(registry.take([])).toBeUndefined();
    expect(registry.size()).toBe(1);
  });

  it("drops a turn that is no longer parked", () => {
    const registry = createParkedTurnRegistry();
    const { turn } = fakeTurn(["call_1"], "ended");
    registry.park({ turn, conversationId: "c1", model: "m", origin });
    expect(registry.take(["call_1"])).toBeUndefined();
    expect(registry.size()).toBe(0);
  });

  it("closes parked turns after the TTL and on closeAll", async () => {
    const timers = manualTimers();
    const registry = createParkedTurnRegistry({ ttlMs: 1000, ...timers.options });
    const a = fakeTurn(["a"]);
    registry.park({ turn: a.turn, conversationId: "c1", model: "m", origin });
    timers.advance(999);
    expect(a.closed).toEqual([]);
    timers.advance(1);
    expect(a.closed).toEqual(["parked turn expired"]);
    expect(registry.take(["a"])).toBeUndefined();
    const b = fakeTurn(["b"]);
    registry.park({ turn: b.turn, conversationId: "c2", model: "m", origin });
    await registry.closeAll();
    expect(b.closed).toEqual(["server shutting down"]);
    expect(registry.size()).toBe(0);
  });

  it("expires each parked turn its TTL after it parked, on one timer for them all", () => {
    const timers = manualTimers();
    const registry = createParkedTurnRegistry({ ttlMs: 1000, ...timers.options });
    const turns = ["a", "b", "c"].map((id) => fakeTurn([id]));
    for (const [i, { turn }] of turns.entries()) {
      registry.park({ turn, conversationId: `c${i}`, model: "m", origin });
      timers.advance(300);
    }
    expect(timers.armed()).toBe(1);
    // a parked at 0, b at 300, c at 600; b is resumed before its TTL, so only a and c expire.
    expect(registry.take(["b"])?.turn).toBe(turns[1]?.turn);
    timers.advance(100);
    expect(turns.map((t) => t.closed)).toEqual([["parked turn expired"], [], []]);
    expect(registry.size()).toBe(1);
    timers.advance(599);
    expect(turns[2]?.closed).toEqual([]);
    timers.advance(1);
    expect(turns.map((t) => t.closed)).toEqual([["parked turn expired"], [], ["parked turn expired"]]);
    expect(registry.size()).toBe(0);
    expect(timers.armed()).toBe(0);
  });

  it("closes the oldest parked turn beyond the cap", () => {
    const registry = createParkedTurnRegistry({ maxEntries: 2 });
    const turns = ["a", "b", "c"].map((id) => fakeTurn([id]));
    for (const [i, { turn }] of turns.entries()) registry.park({ turn, conversationId: `c${i}`, model: "m", origin });
    expect(registry.size()).toBe(2);
    expect(turns[0]?.closed).toEqual(["too many parked turns"]);
    expect(registry.take(["a"])).toBeUndefined();
    expect(registry.take(["c"])?.turn).toBe(turns[2]?.turn);
  });

  it("lets a turn go as soon as it ends while parked, and stops listening once it is taken", async () => {
    const registry = createParkedTurnRegistry();
    const dying = fakeTurn(["call_1"]);
    registry.park({ turn: dying.turn, conversationId: "c1", model: "m", origin });
    const taken = fakeTurn(["call_2"]);
    registry.park({ turn: taken.turn, conversationId: "c2", model: "m", origin });
    expect(registry.size()).toBe(2);
    await dying.turn.close("its Run failed");
    expect(registry.size()).toBe(1);
    expect(registry.take(["call_1"])).toBeUndefined();
    expect(registry.take(["call_2"])?.turn).toBe(taken.turn);
    expect(taken.listening()).toBe(false);
  });

  it("releases a turn answered only in part, whatever its other ids", () => {
    const registry = createParkedTurnRegistry();
    const { turn, listening } = fakeTurn(["call_1", "call_2"]);
    registry.park({ turn, conversationId: "c1", model: "m", origin });
    expect(registry.take(["call_9", "call_2"])).toBeUndefined();
    expect(registry.release(["call_9"])).toBeUndefined();
    expect(registry.release(["call_9", "call_2"])?.turn).toBe(turn);
    expect(listening()).toBe(false);
    expect(registry.size()).toBe(0);
  });
});

describe("a parked slot", () => {
  it("shares its hidden class with every other slot (no fresh map per parked turn)", () => {
    const sameHiddenClass = hiddenClassCheck();
    const registry = createParkedTurnRegistry();
    // Many of them, as a server parks: V8 takes its fast path for a spread only once the site has run a few times.
    const turns = Array.from({ length: 20 }, (_, i) => fakeTurn([`call-${i}`]).turn);
    for (const [i, turn] of turns.entries()) registry.park({ turn, conversationId: `c${i}`, model: "m", origin });
    const slots = turns.map((_, i) => registry.take([`call-${i}`]) as object);
    expect(slots.map((slot) => (slot as { turn: unknown }).turn)).toEqual(turns);
    for (const slot of slots.slice(1)) expect(sameHiddenClass(slots[0] as object, slot)).toBe(true);
  });
});
