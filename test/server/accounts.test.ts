/**
 * Named Cursor accounts served side by side (issue #29) through the real wiring: each request's principal (set here
 * by the stack's test middleware, as a virtual key bound to an account sets it) selects that account's engine, token
 * source and Cursor connection. Proven against the emulator, which knows the accounts as two users: one of them at
 * its usage limit gets that limit's error (per-client steering included) while the other keeps serving; a
 * conversation or a parked turn of one account is never continued under the other; an unknown account is a 403.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineRequest } from "../../src/engine/index.js";
import { type Stack, startStack } from "../support/stack.js";

const ALICE = { userId: "user_alice", email: "alice@example.com" };
const BOB = { userId: "user_bob", email: "bob@example.com" };
const OPENCODE_UA = "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14";

let stack: Stack;
const lines: string[] = [];
beforeAll(async () => {
  stack = await startStack({ accounts: { alice: ALICE, bob: BOB }, defaultAccount: "alice", logLines: lines });
});
afterAll(async () => {
  await stack?.close();
});

function chat(content: string, account: string | undefined, userAgent = "test/1.0"): Promise<Response> {
  return fetch(`${stack.baseURL}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": userAgent,
      ...(account === undefined ? {} : { "x-test-account": account }),
    },
    body: JSON.stringify({ model: "auto", messages: [{ role: "user", content }] }),
  });
}

function request(account: string | undefined, messages: EngineRequest["messages"], tools = false): EngineRequest {
  return {
    model: "auto",
    instructions: [],
    messages,
    tools: tools ? [{ name: "lookup", description: "", inputSchema: { type: "object", properties: {} } }] : [],
    options: { reasoning: false, reasoningEffort: undefined, toolChoice: "auto" },
    ...(account === undefined ? {} : { account }),
  };
}

async function drain(turn: { events: AsyncIterable<unknown> }): Promise<string> {
  let text = "";
  for await (const event of turn.events as AsyncIterable<{ type: string; text?: string }>) {
    if (event.type === "text-delta") text += event.text ?? "";
  }
  return text;
}

describe("named Cursor accounts", () => {
  it("serve side by side, each turn on its own account's login", async () => {
    stack.emulator.resetStats();
    const [alice, bob, unnamed] = await Promise.all([
      chat("hello from alice", "alice"),
      chat("hello from bob", "bob"),
      chat("hello from nobody in particular", undefined),
    ]);
    expect([alice.status, bob.status, unnamed.status]).toEqual([200, 200, 200]);
    expect(stack.emulator.stats().turns).toHaveLength(3);
    // Each account runs on its own logger line, so the log shows whose turn it was.
    expect(lines.some((line) => /account=bob/.test(line))).toBe(true);
  });

  it("an account at its usage limit answers with that limit's error while the other keeps serving", async () => {
    stack.emulator.limitUsage(BOB.userId);
    try {
      const limited = await chat("bob again", "bob");
      expect(limited.status).toBe(429);
      expect(limited.headers.get("x-should-retry")).toBe("false");
      const body = (await limited.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("insufficient_quota");
      expect(body.error.message).toMatch(/usage limit/i);
      // The per-client steering applies to the limited account's answer as to any usage limit.
      const opencode = await chat("bob from opencode", "bob", OPENCODE_UA);
      expect(opencode.status).toBe(402);
      // Alice (and requests without an account, which run on the default account alice) are not affected.
      expect((await chat("alice meanwhile", "alice")).status).toBe(200);
      expect((await chat("nobody meanwhile", undefined)).status).toBe(200);
    } finally {
      stack.emulator.limitUsage(BOB.userId, false);
    }
    expect((await chat("bob after the reset", "bob")).status).toBe(200);
  });

  it("an unknown account is a 403 naming it, never another account's turn", async () => {
    stack.emulator.resetStats();
    const response = await chat("who am I", "carol");
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toContain("`carol`");
    // The principal is a virtual key's holder (a team member): the operator's command is never named to them.
    expect(body.error.message).not.toContain("cursor-bridge login");
    expect(body.error.message).toContain("The person who runs this server can fix it.");
    expect(stack.emulator.stats().turns).toHaveLength(0);
    await expect(
      stack.engine.startTurn(
        request("carol", [{ role: "user", parts: [{ type: "text", text: "x" }] }]),
        AbortSignal.timeout(5000),
      ),
    ).rejects.toMatchObject({ code: "permission_denied", detail: "account_unknown" });
  });

  it("keeps conversations apart: the same history under another account starts a new conversation", async () => {
    stack.emulator.resetStats();
    const first = [{ role: "user" as const, parts: [{ type: "text" as const, text: "shared opening line" }] }];
    const started = await stack.engine.startTurn(request("alice", first), AbortSignal.timeout(10_000));
    expect(started.route).toBe("new");
    const reply = await drain(started);
    const next = [
      ...first,
      { role: "assistant" as const, text: reply, reasoning: [], toolCalls: [] },
      { role: "user" as const, parts: [{ type: "text" as const, text: "[[emu:recall]]" }] },
    ];
    const asBob = await stack.engine.startTurn(request("bob", next), AbortSignal.timeout(10_000));
    expect(asBob.route).toBe("new");
    await drain(asBob);
    const asAlice = await stack.engine.startTurn(request("alice", next), AbortSignal.timeout(10_000));
    expect(asAlice.route).toBe("continued");
    await drain(asAlice);
    const turns = stack.emulator.stats().turns;
    expect(turns[2]?.conversationId).toBe(turns[0]?.conversationId);
    expect(turns[1]?.conversationId).not.toBe(turns[0]?.conversationId);
  });

  it("a turn parked under one account is resumed only under it", async () => {
    const ask = [{ role: "user" as const, parts: [{ type: "text" as const, text: '[[emu:tool lookup {"q":"x"}]]' }] }];
    const parked = await stack.engine.startTurn(request("alice", ask, true), AbortSignal.timeout(10_000));
    const calls: { toolCallId: string; toolName: string; arguments: string }[] = [];
    for await (const event of parked.events as AsyncIterable<{ type: string } & (typeof calls)[number]>) {
      if (event.type === "tool-call") calls.push(event);
    }
    expect(parked.parked).toBe(true);
    expect(calls).toHaveLength(1);
    const call = calls[0] as (typeof calls)[number];
    const answered: EngineRequest["messages"] = [
      ...ask,
      {
        role: "assistant",
        text: "",
        reasoning: [],
        toolCalls: [{ id: call.toolCallId, name: call.toolName, arguments: call.arguments }],
      },
      { role: "tool", toolCallId: call.toolCallId, content: "found it", isError: false },
    ];
    const underBob = await stack.engine.startTurn(request("bob", answered, true), AbortSignal.timeout(10_000));
    expect(underBob.route).not.toBe("resumed");
    await drain(underBob);
    const underAlice = await stack.engine.startTurn(request("alice", answered, true), AbortSignal.timeout(10_000));
    expect(underAlice.route).toBe("resumed");
    expect(await drain(underAlice)).toContain("found it");
  });

  it("the status page shows each account's plan usage and reset (the account at its limit: all of it)", async () => {
    stack.emulator.limitUsage(BOB.userId);
    try {
      const snapshot = (await (await fetch(`${stack.baseURL.replace(/\/v1$/, "")}/status.json`)).json()) as {
        accounts: {
          name: string;
          default: boolean;
          who: string;
          usage: { available: boolean; usedFraction?: number; cycleEnd?: string };
        }[];
      };
      expect(snapshot.accounts.map((a) => [a.name, a.default, a.who])).toEqual([
        ["alice", true, "alice@example.com"],
        ["bob", false, "bob@example.com"],
      ]);
      expect(snapshot.accounts[1]?.usage).toMatchObject({ available: true, usedFraction: 1 });
      expect(snapshot.accounts[0]?.usage.usedFraction).toBeLessThan(1);
      expect(Date.parse(snapshot.accounts[0]?.usage.cycleEnd ?? "")).toBeGreaterThan(Date.now());
      const page = await (await fetch(`${stack.baseURL.replace(/\/v1$/, "")}/`)).text();
      expect(page).toContain('id="accounts-section"');
      expect(page).toContain("bob@example.com");
    } finally {
      stack.emulator.limitUsage(BOB.userId, false);
    }
  });

  it("lists each account's models, and the default's without an account", async () => {
    const response = await fetch(`${stack.baseURL}/models`, { headers: { "x-test-account": "bob" } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect((await fetch(`${stack.baseURL}/models`, { headers: { "x-test-account": "carol" } })).status).toBe(403);
    expect((await fetch(`${stack.baseURL}/models`)).status).toBe(200);
  });
});
