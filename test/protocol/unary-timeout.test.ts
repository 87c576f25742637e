/**
 * A server that accepts the connection but never answers must not hang unary calls (models, usage): they end with a
 * `timeout` ProxyError after `unaryTimeoutMs`.
 */
import { createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { ProxyError } from "../../src/util/errors.js";

let server: Http2Server | undefined;
const streams: ServerHttp2Stream[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe("unary deadline", () => {
  it("turns a silent upstream into a timeout error instead of a hang", async () => {
    server = createServer();
    server.on("stream", (stream) => streams.push(stream)); // accept, never answer
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const api = createCursorApi({
      agentUrl: url,
      apiUrl: url,
      getAccessToken: async () => "token",
      clientVersion: "cli-2026.01.17-d239e66",
      transport: "http2",
      unaryTimeoutMs: 300,
    });
    try {
      const error = await api.getUsableModels().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProxyError);
      expect((error as ProxyError).code).toBe("timeout");
    } finally {
      api.close();
    }
  });
});
