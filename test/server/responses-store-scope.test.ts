/**
 * The Responses API serves only the responses it stored. `serve` and `acp` keep their records in one store (the
 * data directory's `responses/`, or Redis): ACP's editor sessions live there under `acp-session:<id>`, with an
 * index of them all at `acp-session-index`. Through `/v1/responses/{id}` (read, its input items, delete) and
 * `previous_response_id`, any client of the HTTP server read the index (every session's folder and title), each
 * session's conversation, and could delete it. Those ids are now unknown to the API, as an id never issued is.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import type { AcpSessionRecord } from "../../src/surfaces/acp/session-store.js";
import { acpSessionStoreOver } from "../../src/surfaces/acp/session-store.js";
import { type Stack, startStack } from "../support/stack.js";

const SESSION: AcpSessionRecord = {
  id: "3f0c1a52-7d6e-4b8f-9a10-5c2d8e7f6a41",
  cwd: "/home/dev/secret-project",
  mode: "agent",
  model: "auto",
  config: {},
  title: "the launch codes are in config/prod.env",
  messages: [
    { role: "user", parts: [{ type: "text", text: "the launch codes are 0000" }] },
    { role: "assistant", text: "Noted.", reasoning: [], toolCalls: [] },
  ],
  transcript: [],
  updatedAt: 1_800_000_000_000,
};

describe("/v1/responses on a store shared with acp's sessions", () => {
  const store = createMemoryResponseStore();
  const sessions = acpSessionStoreOver(store);
  let stack: Stack;
  let client: OpenAI;

  beforeAll(async () => {
    await sessions.put(SESSION);
    stack = await startStack({ responseStore: store });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
  });
  afterAll(async () => stack.close());

  const ids = ["acp-session-index", `acp-session:${SESSION.id}`];

  it.each(ids)("GET %s and its input items are 404, naming nothing of the session", async (id) => {
    for (const call of [() => client.responses.retrieve(id), () => client.responses.inputItems.list(id)]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      const text = JSON.stringify((error as InstanceType<typeof OpenAI.NotFoundError>).error);
      expect(text).not.toContain("launch codes");
      expect(text).not.toContain("secret-project");
    }
  });

  it.each(ids)("DELETE %s is 404 and the session stays", async (id) => {
    await expect(client.responses.delete(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await sessions.get(SESSION.id))?.title).toBe(SESSION.title);
    expect((await sessions.list()).map((summary) => summary.id)).toEqual([SESSION.id]);
  });

  it.each(ids)("previous_response_id %s is a 400, not a continuation of the session", async (id) => {
    const error = await client.responses
      .create({ model: "auto", input: "[[emu:recall]]", previous_response_id: id })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(JSON.stringify((error as InstanceType<typeof OpenAI.BadRequestError>).error)).not.toContain("launch");
  });

  it("still serves the responses it stored itself", async () => {
    const created = await client.responses.create({ model: "auto", input: "Hello store" });
    expect(created.id).toMatch(/^resp_/);
    expect((await client.responses.retrieve(created.id)).output_text).toBe("You said: Hello store");
    const next = await client.responses.create({
      model: "auto",
      input: "[[emu:recall]]",
      previous_response_id: created.id,
    });
    expect(next.output_text).toBe("First message: Hello store");
  });
});
