/**
 * The HTTP edge over a real socket (@hono/node-server), where the adapter's lightweight request/response objects are
 * in play rather than app.request()'s web objects: body limits by declared and by counted length, and x-request-id
 * on a streamed response.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const stacks: Stack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** POSTs `chunks` to the chat route; with `chunked` no content-length is declared. */
function post(stack: Stack, chunks: string[], chunked: boolean): Promise<RawResponse> {
  const length = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0);
  return new Promise((resolve, reject) => {
    const req = request(
      `${stack.baseURL}/chat/completions`,
      {
        method: "POST",
        headers: { "content-type": "application/json", ...(chunked ? {} : { "content-length": length }) },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (part: string) => (body += part));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe("HTTP edge over a socket", () => {
  it("streams with x-request-id and enforces the body limit with and without content-length", async () => {
    const s = await startStack({ app: { maxBodyBytes: 2048 } });
    stacks.push(s);
    const small = JSON.stringify({ model: "auto", stream: true, messages: [{ role: "user", content: "hello" }] });
    for (const chunked of [false, true]) {
      const ok = await post(s, [small.slice(0, 10), small.slice(10)], chunked);
      expect(ok.status, `chunked=${chunked}`).toBe(200);
      expect(ok.headers["content-type"]).toMatch(/text\/event-stream/);
      expect(ok.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
      expect(ok.body).toMatch(/data: \[DONE\]\n\n$/);
    }
    const big = JSON.stringify({ model: "auto", messages: [{ role: "user", content: "x".repeat(4096) }] });
    for (const chunked of [false, true]) {
      const rejected = await post(s, [big.slice(0, 1000), big.slice(1000)], chunked);
      expect(rejected.status, `chunked=${chunked}`).toBe(413);
      expect(rejected.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
      expect((JSON.parse(rejected.body) as { error: { type: string } }).error.type).toBeTruthy();
    }
  });
});
