/**
 * Errors users can act on, through the real openai SDK with its default settings (2 retries, honouring
 * `retry-after` and `x-should-retry`): a Cursor usage limit reaches the caller at once, not after an hour of silent
 * retries; a conversation state Cursor cannot find is a 502; a Cursor login problem is told apart from a wrong local
 * API key.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText } from "ai";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type Stack, type StackOptions, startStack } from "../support/stack.js";

const stacks: Stack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

async function stack(options: StackOptions = {}): Promise<Stack> {
  const s = await startStack(options);
  stacks.push(s);
  return s;
}

type ApiError = InstanceType<typeof OpenAI.APIError>;

/** An SDK client with default retry and timeout settings that counts the HTTP requests it makes. */
function defaultClient(s: Stack, apiKey = "local"): { client: OpenAI; requests: () => number } {
  let requests = 0;
  const client = new OpenAI({
    baseURL: s.baseURL,
    apiKey,
    fetch: (input, init) => {
      requests += 1;
      return fetch(input, init);
    },
  });
  return { client, requests: () => requests };
}

describe("actionable errors through the openai SDK (default settings)", () => {
  it.each([false, true])("a usage limit reaches the caller without retries (stream=%s)", async (stream) => {
    const s = await stack();
    const { client, requests } = defaultClient(s);
    const started = Date.now();
    const error = (await client.chat.completions
      .create({ model: "auto", stream, messages: [{ role: "user", content: "[[emu:error usage_limit]]" }] })
      .catch((e: unknown) => e)) as ApiError;
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.code).toBe("insufficient_quota");
    expect(error.headers?.get("x-should-retry")).toBe("false");
    expect(error.headers?.get("retry-after")).toBeNull();
    expect(error.message).toMatch(/usage limit/i);
    expect(error.message).toContain("did not say when it resets");
    // One request: the SDK did not retry (the failure mode was an hour of silent waiting).
    expect(requests()).toBe(1);
    expect(elapsed).toBeLessThan(10_000);
  });

  it("a blob Cursor cannot find is an upstream error (502 blob_not_found), not a 404", async () => {
    const s = await stack();
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    const error = (await client.chat.completions
      .create({ model: "auto", messages: [{ role: "user", content: "[[emu:error blob_not_found]]" }] })
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(502);
    expect(error.code).toBe("blob_not_found");
    expect(error.headers?.get("x-should-retry")).toBe("false");
  });

  it("tells a Cursor login problem (cursor_auth_failed) apart from a wrong local API key (invalid_api_key)", async () => {
    const s = await stack({ app: { apiKey: "local-secret-key" } });
    const cursor = (await new OpenAI({ baseURL: s.baseURL, apiKey: "local-secret-key", maxRetries: 0 }).chat.completions
      .create({ model: "auto", messages: [{ role: "user", content: "[[emu:error unauthenticated]]" }] })
      .catch((e: unknown) => e)) as ApiError;
    expect(cursor.status).toBe(401);
    expect(cursor.code).toBe("cursor_auth_failed");
    expect(cursor.message).toContain("cursor-bridge login");
    const local = (await new OpenAI({ baseURL: s.baseURL, apiKey: "wrong", maxRetries: 0 }).chat.completions
      .create({ model: "auto", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e)) as ApiError;
    expect(local.status).toBe(401);
    expect(local.code).toBe("invalid_api_key");
    expect(local.message).not.toContain("cursor-bridge login");
  });

  it("the AI SDK (default retries) shows a usage limit after its two short backoffs, with the limit named", async () => {
    // The AI SDK ignores x-should-retry and retries every 429 twice; with no Retry-After it waits 2 s, then 4 s.
    const s = await stack();
    let requests = 0;
    const provider = createOpenAICompatible({
      name: "cursor-bridge",
      baseURL: s.baseURL,
      apiKey: "local",
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const started = Date.now();
    const error = (await generateText({ model: provider("auto"), prompt: "[[emu:error usage_limit]]" }).catch(
      (e: unknown) => e,
    )) as Error & { lastError?: { statusCode?: number; responseBody?: string } };
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(requests).toBe(3);
    expect(error.lastError?.statusCode).toBe(429);
    expect(error.lastError?.responseBody).toContain("insufficient_quota");
    expect(error.message).toMatch(/usage limit/i);
  }, 20_000);
});
