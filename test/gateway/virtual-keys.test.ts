/**
 * Virtual keys on every door (issue #29), on the real wiring (test/support/stack.ts: emulator, protocol client,
 * wireBridge) with the gateway serve builds: a revoked, unknown or expired key gets 401 in the door's shape, a model
 * outside the key's globs 403 naming the model, an allowed key 200; the `--api-key` stays the operator's key.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createGateway, createKeyService, type Gateway } from "../../src/gateway/index.js";
import { createMemoryAuditLog } from "../../src/stores/memory/audit-log.js";
import { createMemoryKeyStore } from "../../src/stores/memory/key-store.js";
import { createLogger } from "../../src/util/logger.js";
import { type Stack, startStack } from "../support/stack.js";

type Json = Record<string, unknown>;
interface Door {
  name: string;
  shape: "openai" | "anthropic";
  call(base: string, key: string | undefined, model: string): Promise<Response>;
}

const headers = (key: string | undefined, extra: Record<string, string> = {}) => ({
  "content-type": "application/json",
  ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
  ...extra,
});
const post = (path: string, body: Json) => (base: string, key: string | undefined) =>
  fetch(`${base}${path}`, { method: "POST", headers: headers(key), body: JSON.stringify(body) });

const DOORS: Door[] = [
  {
    name: "chat",
    shape: "openai",
    call: (base, key, model) =>
      post("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] })(base, key),
  },
  {
    name: "responses",
    shape: "openai",
    call: (base, key, model) => post("/v1/responses", { model, input: "hi" })(base, key),
  },
  {
    name: "messages",
    shape: "anthropic",
    call: (base, key, model) =>
      fetch(`${base}/v1/messages`, {
        method: "POST",
        // Claude Code sends its key as x-api-key; the check reads either header.
        headers: {
          "content-type": "application/json",
          "anthropic-version": "2023-06-01",
          ...(key === undefined ? {} : { "x-api-key": key }),
        },
        body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
      }),
  },
  {
    name: "models",
    shape: "openai",
    call: (base, key, model) => fetch(`${base}/v1/models/${model}`, { headers: headers(key) }),
  },
];

const OPERATOR_KEY = "operator-key-0123456789";
const logLines: string[] = [];
let stack: Stack;
let gateway: Gateway;
let service: ReturnType<typeof createKeyService>;
const by = { actor: "cli:test", from: "cli" };
const keys: Record<"allowed" | "revoked" | "expired" | "rotatedOld" | "rotatedNew", string> = {
  allowed: "",
  revoked: "",
  expired: "",
  rotatedOld: "",
  rotatedNew: "",
};

beforeAll(async () => {
  const store = createMemoryKeyStore();
  const audit = createMemoryAuditLog();
  service = createKeyService({ store, audit });
  keys.allowed = (await service.create({ name: "alice", models: "composer-*,claude-4.5-sonnet" }, by)).key;
  keys.revoked = (await service.create({ name: "bob" }, by)).key;
  await service.revoke("bob", by);
  // Made two hours ago with one hour to live.
  const past = createKeyService({ store, audit, now: () => Date.now() - 2 * 3_600_000 });
  keys.expired = (await past.create({ name: "carol", expires: "1h" }, by)).key;
  keys.rotatedOld = (await service.create({ name: "dave" }, by)).key;
  keys.rotatedNew = (await service.rotate("dave", by)).key;
  gateway = await createGateway({
    keys: store,
    audit,
    apiKey: OPERATOR_KEY,
    adminKey: undefined,
    logger: createLogger({ level: "silent" }),
  });
  stack = await startStack({
    app: { apiKey: OPERATOR_KEY },
    gateway: { auth: gateway.auth, onOwnerGone: gateway.onOwnerGone },
    logLines,
  });
});
afterAll(async () => {
  gateway?.close();
  await stack?.close();
});

async function expectError(response: Response, door: Door, status: number, text: RegExp): Promise<void> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as Json;
  if (door.shape === "anthropic") {
    expect(body.type).toBe("error");
    expect((body.error as Json).type).toBe(status === 401 ? "authentication_error" : "permission_error");
    expect((body.error as Json).message).toMatch(text);
  } else {
    const error = body.error as Json;
    expect(error.code).toBe(status === 401 ? "invalid_api_key" : "permission_denied");
    expect(error.message).toMatch(text);
  }
}

describe.each(DOORS.map((door) => [door.name, door] as const))("virtual keys on the %s door", (_name, door) => {
  it("an allowed key and model: 200", async () => {
    const response = await door.call(stack.server.url, keys.allowed, "composer-1");
    expect(response.status).toBe(200);
    await response.text();
  });

  it("a revoked key: 401 saying so", async () => {
    await expectError(await door.call(stack.server.url, keys.revoked, "composer-1"), door, 401, /revoked/);
  });

  it("an unknown key (well-formed, never issued): 401", async () => {
    const unknown = `cbk-${"A".repeat(43)}`;
    await expectError(await door.call(stack.server.url, unknown, "composer-1"), door, 401, /Invalid API key/);
  });

  it("an expired key: 401 saying when it expired", async () => {
    await expectError(await door.call(stack.server.url, keys.expired, "composer-1"), door, 401, /expired at 20\d\d-/);
  });

  it("no key at all: 401", async () => {
    await expectError(await door.call(stack.server.url, undefined, "composer-1"), door, 401, /Missing API key/);
  });

  it("a model outside the key's globs: 403 naming the model", async () => {
    await expectError(await door.call(stack.server.url, keys.allowed, "gpt-4o"), door, 403, /`gpt-4o`/);
  });

  it("a rotated key: the new one works, the old one is unknown", async () => {
    const fresh = await door.call(stack.server.url, keys.rotatedNew, "gpt-4o");
    expect(fresh.status).toBe(200);
    await fresh.text();
    await expectError(await door.call(stack.server.url, keys.rotatedOld, "gpt-4o"), door, 401, /Invalid API key/);
  });

  it("the --api-key stays valid as the operator's key, without model restrictions", async () => {
    const response = await door.call(stack.server.url, OPERATOR_KEY, "gpt-4o");
    expect(response.status).toBe(200);
    await response.text();
  });
});

describe("the model list under a virtual key", () => {
  it("lists only the models the key may use (globs match ids and aliases' targets)", async () => {
    const response = await fetch(`${stack.baseURL}/models`, { headers: headers(keys.allowed) });
    expect(response.status).toBe(200);
    const data = ((await response.json()) as { data: { id: string; aliases: string[] }[] }).data;
    const ids = data.map((model) => model.id);
    expect(ids).toContain("composer-1");
    expect(ids).toContain("claude-4.5-sonnet");
    // A built-in alias is listed when the model it stands for is allowed.
    expect(ids).toContain("sonnet-4.5");
    expect(ids).not.toContain("gpt-4o");
    const allowed = (id: string) => id.startsWith("composer-") || id === "claude-4.5-sonnet";
    expect(data.every((model) => allowed(model.id) || allowed(model.aliases[0] ?? ""))).toBe(true);
  });

  it("the access log names the key (its name, never the key)", async () => {
    const response = await fetch(`${stack.baseURL}/models`, { headers: headers(keys.allowed) });
    await response.text();
    const line = logLines.find((l) => l.includes("GET /v1/models 200") && l.includes("key=alice"));
    expect(line).toBeDefined();
    expect(logLines.join("\n")).not.toContain(keys.allowed);
  });
});

describe("stored responses under virtual keys", () => {
  it("belong to the key that made them: another key (or the operator's) cannot read, continue or delete them", async () => {
    const made = await post("/v1/responses", { model: "composer-1", input: "alice's private note" })(
      stack.server.url,
      keys.allowed,
    );
    expect(made.status).toBe(200);
    const { id } = (await made.json()) as { id: string };
    const other = keys.rotatedNew;
    const get = (key: string) => fetch(`${stack.server.url}/v1/responses/${id}`, { headers: headers(key) });
    const del = (key: string) =>
      fetch(`${stack.server.url}/v1/responses/${id}`, { method: "DELETE", headers: headers(key) });
    for (const key of [other, OPERATOR_KEY]) {
      const read = await get(key);
      expect(read.status).toBe(404);
      expect(((await read.json()) as { error: Json }).error.message).toBe(`Response with id '${id}' not found.`);
      const continued = await post("/v1/responses", { model: "composer-1", input: "go on", previous_response_id: id })(
        stack.server.url,
        key,
      );
      expect(continued.status).toBe(400);
      expect(((await continued.json()) as { error: Json }).error.param).toBe("previous_response_id");
      expect((await del(key)).status).toBe(404);
    }
    // Its own key still has it, continues it and deletes it.
    expect((await get(keys.allowed)).status).toBe(200);
    const continued = await post("/v1/responses", { model: "composer-1", input: "go on", previous_response_id: id })(
      stack.server.url,
      keys.allowed,
    );
    expect(continued.status).toBe(200);
    await continued.text();
    expect((await del(keys.allowed)).status).toBe(200);
    expect((await get(keys.allowed)).status).toBe(404);
  });
});

describe("conversations under virtual keys", () => {
  it("a key never continues another key's conversation, even after the same messages and the same answer", async () => {
    const chat = (system: string, messages: Json[]) =>
      post("/v1/chat/completions", {
        model: "composer-1",
        messages: [{ role: "system", content: system }, ...messages],
      });
    const opening = { role: "user", content: "Shared opening [[emu:tokens 6]]" };
    const first = async (key: string, system: string) => {
      const response = await chat(system, [opening])(stack.server.url, key);
      expect(response.status).toBe(200);
      return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
    };
    stack.emulator.resetStats();
    // The emulator's answer to the same message is the same text: only the key tells the conversations apart.
    const answer = await first(keys.allowed, "Alice's private instructions.");
    expect(await first(keys.rotatedNew, "Someone else's instructions.")).toBe(answer);
    const next = [opening, { role: "assistant", content: answer }, { role: "user", content: "[[emu:recall]]" }];
    for (const key of [keys.allowed, keys.rotatedNew]) {
      const response = await chat("Same as before.", next)(stack.server.url, key);
      expect(response.status).toBe(200);
      await response.json();
    }
    const turns = stack.emulator.stats().turns;
    expect(turns).toHaveLength(4);
    expect(turns[0]?.conversationId).not.toBe(turns[1]?.conversationId);
    // Each key's second turn continued its own first turn's conversation.
    expect(turns[2]?.conversationId).toBe(turns[0]?.conversationId);
    expect(turns[3]?.conversationId).toBe(turns[1]?.conversationId);
  });
});

/** About 5 s of streaming (docs/emulator.md): still running when its key stops working. */
const SLOW = "slowly [[emu:tokens 200]] [[emu:rate 40]]";
const STREAMED: Record<string, { path: string; body: Json }> = {
  chat: {
    path: "/v1/chat/completions",
    body: { model: "gpt-4o", stream: true, messages: [{ role: "user", content: SLOW }] },
  },
  responses: { path: "/v1/responses", body: { model: "gpt-4o", stream: true, input: SLOW } },
  messages: {
    path: "/v1/messages",
    body: { model: "gpt-4o", stream: true, max_tokens: 500, messages: [{ role: "user", content: SLOW }] },
  },
};

describe.each(Object.keys(STREAMED))("a key that stops working while its answer streams (%s)", (door) => {
  it.each(["revoke", "rotate"] as const)("%s: the stream ends with an error saying so", async (change) => {
    const name = `streamer-${door}-${change}`;
    const key = (await service.create({ name }, by)).key;
    await gateway.index.refresh();
    const { path, body } = STREAMED[door] as { path: string; body: Json };
    const response = await fetch(`${stack.server.url}${path}`, {
      method: "POST",
      headers: headers(key, { "anthropic-version": "2023-06-01" }),
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader?.read())?.value);
    if (change === "revoke") await service.revoke(name, by);
    else await service.rotate(name, by);
    for (;;) {
      const chunk = await reader?.read();
      if (chunk === undefined || chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    expect(text).toContain(change === "revoke" ? "was revoked while this request ran" : "rotated");
    // Cut, not run to its end: the emulator's whole answer is 200 tokens.
    expect((text.match(/lorem|ipsum|alpha|bravo|golf|hotel/g) ?? []).length).toBeLessThan(190);
  });
});

describe("a key revoked while a turn of it is parked on tool calls", () => {
  const weather: OpenAI.Chat.Completions.ChatCompletionTool = {
    type: "function",
    function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  };
  const ask = 'Weather? [[emu:tool get_weather {"city":"Paris"}]]';

  it("its parked turn is closed at the revocation (its Run let go), and its tool result is refused", async () => {
    const key = (await service.create({ name: "parker" }, by)).key;
    const other = (await service.create({ name: "keeper" }, by)).key;
    await gateway.index.refresh();
    const before = stack.parked.size();
    const park = async (apiKey: string) => {
      const client = new OpenAI({ baseURL: stack.baseURL, apiKey, maxRetries: 0 });
      const first = await client.chat.completions.create({
        model: "composer-1",
        tools: [weather],
        messages: [{ role: "user", content: ask }],
      });
      const assistant = first.choices[0]?.message;
      const call = assistant?.tool_calls?.[0];
      if (assistant === undefined || call === undefined) throw new Error("expected a tool call");
      return { client, assistant, call, runs: stack.emulator.stats().turns.length };
    };
    const revoked = await park(key);
    const kept = await park(other);
    expect(stack.parked.size()).toBe(before + 2);
    const outcome = (runs: number) => stack.emulator.stats().turns[runs - 1]?.outcome;
    expect(outcome(revoked.runs)).toBeUndefined();

    await service.revoke("parker", by);
    // Within a poll of the key store (200 ms), not the parked-turn TTL (a minute here).
    await vi.waitFor(() => expect(stack.parked.size()).toBe(before + 1), { timeout: 20_000, interval: 50 });
    await vi.waitFor(() => expect(outcome(revoked.runs)).toBe("cancelled"), { timeout: 20_000, interval: 50 });
    // The other key's parked turn stays parked.
    expect(outcome(kept.runs)).toBeUndefined();

    const result = revoked.client.chat.completions.create({
      model: "composer-1",
      tools: [weather],
      messages: [
        { role: "user", content: ask },
        revoked.assistant,
        { role: "tool", tool_call_id: revoked.call.id, content: "sunny" },
      ],
    });
    await expect(result).rejects.toMatchObject({ status: 401, code: "invalid_api_key" });
    const resumed = await kept.client.chat.completions.create({
      model: "composer-1",
      tools: [weather],
      messages: [
        { role: "user", content: ask },
        kept.assistant,
        { role: "tool", tool_call_id: kept.call.id, content: "sunny" },
      ],
    });
    expect(resumed.choices[0]?.message.content).toContain("get_weather returned: sunny");
    expect(stack.parked.size()).toBe(before);
  });
});
