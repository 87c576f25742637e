/**
 * A graceful stop over real HTTP (server/drain.ts, on a Node server wired as listen.ts wires it): new connections are
 * refused at once, a request that still arrives on an open connection gets the door-shaped 503 with `Connection:
 * close`, the requests in flight finish, and when the drain time is up the ones left are ended by the caller and,
 * failing that, cut after the final-frames grace.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_DRAIN_TIMEOUT_MS, SETTINGS } from "../config/settings.js";
import { toOpenAIError } from "../surfaces/kit/openai-error.js";
import { toAnthropicError } from "../surfaces/messages/error-body.js";
import { shuttingDown } from "../util/shutdown-notice.js";
import { FINAL_FRAMES_MS, RequestsInFlight } from "./drain.js";

interface Served {
  server: Server;
  inFlight: RequestsInFlight;
  port: number;
  /** The server's side of every connection, in accept order. */
  sockets: Socket[];
}

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.closeAllConnections();
});

/** A server whose requests go to `handle` unless it drains (as listen.ts wires it). */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  let inFlight: RequestsInFlight | undefined;
  const server = createServer((req, res) => {
    if (inFlight?.draining) {
      inFlight.refuse(req, res);
      return;
    }
    inFlight?.track(res);
    handle(req, res);
  });
  inFlight = new RequestsInFlight(server);
  const sockets: Socket[] = [];
  server.on("connection", (socket: Socket) => sockets.push(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, inFlight, port: (server.address() as AddressInfo).port, sockets };
}

/** Resolves when `check` holds (checked every 10 ms; the test's own timeout bounds the wait). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A raw connection that has sent the start of a request's headers (the server has read them). */
async function halfSentRequest(served: Served, path: string): Promise<{ socket: Socket; answer: Promise<string> }> {
  const before = served.sockets.length;
  const socket = connect(served.port, "127.0.0.1");
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const answer = new Promise<string>((resolve) => socket.once("close", () => resolve(text)));
  const start = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`;
  socket.write(start);
  await until(() => (served.sockets[before]?.bytesRead ?? 0) >= start.length);
  return { socket, answer };
}

function parse(raw: string): { status: number; headers: string; body: unknown } {
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body: JSON.parse(body) };
}

describe("a graceful stop", () => {
  it("by default fits docker stop's 10 s grace: the drain, the final frames and a second to close the stores", () => {
    const setting = SETTINGS.find((spec) => spec.name === "drainTimeoutMs");
    expect(setting?.defaultText).toBe(String(DEFAULT_DRAIN_TIMEOUT_MS));
    expect(DEFAULT_DRAIN_TIMEOUT_MS + FINAL_FRAMES_MS + 1_000).toBeLessThanOrEqual(10_000);
  });

  it("refuses new work at once, answers a late request 503 in its door's shape, lets the one in flight finish", async () => {
    let release = () => {};
    let entered = false;
    const served = await serve((_req, res) => {
      entered = true;
      release = () => res.end("done");
    });
    const slow = fetch(`http://127.0.0.1:${served.port}/slow`);
    await until(() => entered);
    const anthropic = await halfSentRequest(served, "/v1/messages");
    const openai = await halfSentRequest(served, "/v1/chat/completions");

    let draining: number | undefined;
    let timedOut = false;
    const drained = served.inFlight.drain({
      timeoutMs: 120_000,
      onDrain: (n) => (draining = n),
      onTimeout: () => (timedOut = true),
    });
    expect(draining).toBe(1);
    // A new connection is refused (the listening socket is closed).
    const refused = await fetch(`http://127.0.0.1:${served.port}/health`).then(
      () => "answered",
      (error: Error & { cause?: { code?: string } }) => error.cause?.code,
    );
    expect(refused).toBe("ECONNREFUSED");

    // Requests that arrive on connections already open get the 503 of their door, and the connection closes.
    for (const { socket } of [anthropic, openai]) socket.write("Content-Length: 2\r\n\r\n{}");
    const fromMessages = parse(await anthropic.answer);
    expect(fromMessages.status).toBe(503);
    expect(fromMessages.headers).toContain("connection: close");
    expect(fromMessages.headers).toContain("x-should-retry: true");
    expect(fromMessages.body).toEqual(toAnthropicError(shuttingDown(false)).body);
    expect(fromMessages.body).toMatchObject({ error: { type: "overloaded_error" } });
    const fromChat = parse(await openai.answer);
    expect(fromChat.status).toBe(503);
    expect(fromChat.headers).toContain("connection: close");
    expect(fromChat.body).toEqual(toOpenAIError(shuttingDown(false)).body);
    expect(fromChat.body).toMatchObject({ error: { code: "server_shutting_down", type: "server_error" } });

    // The request in flight finishes, told not to reuse its connection; then the server is closed.
    release();
    const answer = await slow;
    expect(await answer.text()).toBe("done");
    expect(answer.headers.get("connection")).toBe("close");
    await drained;
    expect(timedOut).toBe(false);
    expect(served.server.listening).toBe(false);
  }, 60_000);

  it("when the drain time is up, the caller ends what is left; what it does not end is cut", async () => {
    const streams = new Map<string, ServerResponse>();
    const served = await serve((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      streams.set(req.url ?? "", res);
    });
    const read = async (path: string): Promise<string> => {
      const response = await fetch(`http://127.0.0.1:${served.port}${path}`);
      let text = "";
      try {
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          text += Buffer.from(read.value).toString();
        }
      } catch {
        text += "<cut>";
      }
      return text;
    };
    const ended = read("/ended");
    const stuck = read("/stuck");
    await until(() => streams.size === 2);

    let left: number | undefined;
    await served.inFlight.drain({
      timeoutMs: 50,
      onTimeout: (n) => {
        left = n;
        streams.get("/ended")?.end("data: final error\n\n");
      },
    });
    expect(left).toBe(2);
    expect(await ended).toBe("data: first\n\ndata: final error\n\n");
    expect(await stuck).toBe("data: first\n\n<cut>");
    expect(served.server.listening).toBe(false);
  }, 60_000);

  it("a late request with a large body gets its 503 after the body, not a reset", async () => {
    let release = () => {};
    const served = await serve((_req, res) => {
      release = () => res.end("done");
    });
    // A request in flight keeps the drain open while the late one arrives.
    const slow = fetch(`http://127.0.0.1:${served.port}/slow`);
    await until(() => served.inFlight.size === 1);
    const late = await halfSentRequest(served, "/v1/chat/completions");
    let error: string | undefined;
    late.socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code));
    const drained = served.inFlight.drain({ timeoutMs: 120_000 });
    // 16 MiB: far more than the socket buffers hold, so the client is still sending when an eager answer would go out.
    const body = Buffer.alloc(16 * 1024 * 1024, 0x20);
    late.socket.write(`Content-Length: ${body.length}\r\n\r\n`);
    late.socket.end(body);
    const answer = parse(await late.answer);
    expect(error).toBeUndefined();
    expect(answer.status).toBe(503);
    expect(answer.headers).toContain("connection: close");
    expect(answer.body).toEqual(toOpenAIError(shuttingDown(false)).body);
    release();
    expect(await (await slow).text()).toBe("done");
    await drained;
  }, 60_000);
});
