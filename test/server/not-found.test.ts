/** A 404 for an unknown path lists the endpoints that exist, and points at /v1 only when the path lacks it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack.close();
});

async function notFound(path: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${stack.server.url}${path}`, { headers });
  expect(response.status).toBe(404);
  const body = (await response.json()) as { error: { message: string; code?: string; type: string } };
  return body.error.message;
}

describe("unknown paths", () => {
  it("outside /v1: says the API lives under /v1 and lists the endpoints", async () => {
    const message = await notFound("/chat/completions");
    expect(message).toContain("No route for GET /chat/completions. The API lives under /v1.");
    const endpoints = [
      "POST /v1/chat/completions",
      "POST /v1/messages",
      "GET /v1/models",
      "GET /v1/models/:id,",
      "GET /health",
    ];
    for (const endpoint of endpoints) {
      expect(message).toContain(endpoint);
    }
  });

  it("under /v1: lists the endpoints without the /v1 hint (also in Anthropic's shape)", async () => {
    const message = await notFound("/v1/chat/complete");
    expect(message).not.toContain("lives under /v1");
    expect(message).toMatch(/Endpoints: .*POST \/v1\/chat\/completions.*GET\/DELETE \/v1\/responses\/:id/);
    const anthropic = await notFound("/v1/message", { "anthropic-version": "2023-06-01" });
    expect(anthropic).not.toContain("lives under /v1");
    expect(anthropic).toContain("POST /v1/messages/count_tokens");
  });
});
