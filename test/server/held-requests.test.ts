/**
 * server/listen.ts `bind`: a port bound before its app exists holds the requests that arrive (never answering them
 * itself, so nothing, /health included, gets a 200 before the app serves), hands them to the app in arrival order
 * once it serves, and answers them 503 when the start fails.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bind, type PendingServer } from "../../src/server/listen.js";

const open: PendingServer[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
});

async function bound(): Promise<PendingServer> {
  const server = await bind({ host: "127.0.0.1", port: 0, apiKey: undefined });
  open.push(server);
  return server;
}

/** A request whose answer is recorded when it comes (status, body), without awaiting it. */
function send(url: string, method = "GET", body?: string) {
  const answer: { status?: number | undefined; body?: string } = {};
  const done = new Promise<typeof answer>((resolve, reject) => {
    const req = request(url, { method, agent: false }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => {
        answer.status = res.statusCode;
        answer.body = text;
        resolve(answer);
      });
    });
    req.on("error", reject);
    req.end(body);
  });
  return { answer, done };
}

describe("a bound port before its app serves", () => {
  it("holds requests, /health included, and serves them in arrival order once the app is given", async () => {
    const server = await bound();
    const seen: string[] = [];
    const health = send(`${server.url}/health`);
    await vi.waitFor(() => expect(server.waiting).toBe(1));
    const chat = send(`${server.url}/v1/chat/completions`, "POST", '{"model":"auto"}');
    await vi.waitFor(() => expect(server.waiting).toBe(2));
    // Held, not answered: no status of any kind has come back.
    expect(health.answer.status).toBeUndefined();
    expect(chat.answer.status).toBeUndefined();
    await server.serve({
      fetch: async (req) => {
        const path = new URL(req.url).pathname;
        seen.push(path);
        const body = req.method === "POST" ? await req.text() : "ok";
        return new Response(`${path}:${body}`, { status: 200 });
      },
    });
    expect(await health.done).toEqual({ status: 200, body: "/health:ok" });
    expect(await chat.done).toEqual({ status: 200, body: '/v1/chat/completions:{"model":"auto"}' });
    expect(seen).toEqual(["/health", "/v1/chat/completions"]);
    expect(server.waiting).toBe(0);
    // Later requests go straight to the app.
    expect(await send(`${server.url}/health`).done).toMatchObject({ status: 200 });
  });

  it("answers held and later requests 503 with an OpenAI-shaped error when the start fails, then closes", async () => {
    const server = await bound();
    const held = send(`${server.url}/v1/models`);
    await vi.waitFor(() => expect(server.waiting).toBe(1));
    await server.fail("cursor-bridge could not start: the data directory is not writable");
    const answer = await held.done;
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body ?? "")).toEqual({
      error: {
        message: "cursor-bridge could not start: the data directory is not writable",
        type: "server_error",
        param: null,
        code: "backend_unavailable",
      },
    });
    await expect(send(`${server.url}/health`).done).rejects.toThrow(/ECONNREFUSED/);
  });

  it("a stop before the app loaded answers a held request with a large body 503 after its body, not a reset", async () => {
    const server = await bound();
    const socket = connect(server.port, "127.0.0.1");
    let text = "";
    let error: string | undefined;
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    // 16 MiB, held unread: the client is still sending it when the stop comes.
    const body = Buffer.alloc(16 * 1024 * 1024, 0x20);
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    socket.end(body);
    await vi.waitFor(() => expect(server.waiting).toBe(1), { timeout: 30_000 });
    // Nothing else is in flight: the drain must still wait for this answer instead of cutting the connection.
    let toldInFlight: number | undefined;
    await server.shutdown({ timeoutMs: 60_000, onDrain: (n) => (toldInFlight = n) });
    await closed;
    expect(error).toBeUndefined();
    expect(toldInFlight).toBe(1);
    const [head = "", answer = ""] = text.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(answer)).toMatchObject({ error: { code: "server_shutting_down" } });
  }, 90_000);

  it("refuses an unsafe bind before holding anything", async () => {
    await expect(bind({ host: "0.0.0.0", port: 0, apiKey: undefined })).rejects.toThrow(/without an API key/);
  });
});
