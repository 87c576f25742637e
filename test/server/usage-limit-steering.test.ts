/**
 * A usage limit as each client gets it (the real clients are driven in test/e2e/usage-limit.test.ts): a 429
 * `insufficient_quota` for everyone, except OpenCode (a 402, which it does not retry, with the remaining time in
 * words) and Codex on /v1/responses (a `response.failed` stream whose error it shows verbatim). The Anthropic SDK
 * with its default retries shows it after one request (the openai SDK and the AI SDK: actionable-errors.test.ts).
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durationInWords, steeredClient, withDurationsInWords } from "../../src/server/usage-limit-steering.js";
import { type Stack, startStack } from "../support/stack.js";

const OPENCODE_UA = "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14";
const CODEX_UA = "codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)";
const LIMIT = "[[emu:error usage_limit]]";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

function post(path: string, body: unknown, userAgent: string): Promise<Response> {
  return fetch(`${stack.baseURL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": userAgent, authorization: "Bearer local" },
    body: JSON.stringify(body),
  });
}

const chat = (stream: boolean) => ({ model: "auto", stream, messages: [{ role: "user", content: LIMIT }] });

describe("usage limits per client", () => {
  it("stay a 429 insufficient_quota for other clients", async () => {
    for (const ua of ["OpenAI/JS 6.1.0", "ai-sdk/openai-compatible/2.0.1 runtime/node.js/20", CODEX_UA]) {
      const response = await post("/chat/completions", chat(true), ua);
      expect(response.status, ua).toBe(429);
      expect(response.headers.get("x-should-retry")).toBe("false");
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("insufficient_quota");
      expect(body.error.message).toMatch(/usage limit/i);
    }
  });

  it.each([false, true])("OpenCode gets a 402 with the same error (stream=%s)", async (stream) => {
    const response = await post("/chat/completions", chat(stream), OPENCODE_UA);
    expect(response.status).toBe(402);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("retry-after")).toBeNull();
    expect(response.headers.get("x-request-id")).toMatch(/\w+/);
    const body = (await response.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: "insufficient_quota", type: "insufficient_quota" });
    expect(body.error.message).toMatch(/^Cursor usage limit reached/);
    expect(body.error.message).toMatch(/resets/);
  });

  it("Codex gets a response.failed stream on /v1/responses, with the bridge's message", async () => {
    const response = await post("/responses", { model: "auto", stream: true, input: LIMIT }, CODEX_UA);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const text = await response.text();
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map(
        (line) =>
          JSON.parse(line.slice(6)) as { type: string; response: { status: string; error?: { message: string } } },
      );
    expect(events.map((event) => event.type)).toEqual(["response.created", "response.failed"]);
    expect(events[1]?.response.status).toBe("failed");
    expect(events[1]?.response.error?.message).toMatch(/^Cursor usage limit reached.*resets/);
  });

  it("the Anthropic SDK (default retries) shows the bridge's message after one request", async () => {
    let requests = 0;
    const client = new Anthropic({
      baseURL: stack.baseURL.replace(/\/v1$/, ""),
      apiKey: "local",
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const started = Date.now();
    const error = (await client.messages
      .create({ model: "auto", max_tokens: 64, messages: [{ role: "user", content: LIMIT }] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(requests).toBe(1);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(error.message).toMatch(/Cursor usage limit reached.*resets/);
  });

  it("recognises the clients by User-Agent only", () => {
    expect(steeredClient(OPENCODE_UA)).toBe("opencode");
    expect(steeredClient(CODEX_UA)).toBe("codex");
    expect(steeredClient("codex_cli_rs/0.169.0 (Mac OS 15.1; arm64)")).toBe("codex");
    expect(steeredClient("claude-cli/2.1.330 (external, sdk-cli)")).toBeUndefined();
    expect(steeredClient(undefined)).toBeUndefined();
  });

  it("writes the time until a reset in words, without digit runs OpenCode takes for a status", () => {
    expect(durationInWords(432_000)).toBe("5 days");
    expect(durationInWords(439_200)).toBe("5 days 2 hours");
    expect(durationInWords(14_290)).toBe("3 hours 58 minutes");
    expect(durationInWords(61)).toBe("1 minute");
    expect(durationInWords(20)).toBe("less than a minute");
    expect(withDurationsInWords("It resets at 2026-12-01T00:00:00Z (in 1500 s).")).toBe(
      "It resets at 2026-12-01T00:00:00Z (in 25 minutes).",
    );
  });
});
