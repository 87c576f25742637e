import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { coalesceWritesPerTurn, flushHeadersCoalesced } from "./write-coalescing.js";

const frames = ["data: a\n\n", "data: é 😀 \u2028\n\n", `data: ${"x".repeat(70_000)}\n\n`, "", "data: [DONE]\n\n"];

/** Writes `frames` (awaiting `drain` whenever a write says so), `rounds` times, then ends. */
async function writeFrames(res: ServerResponse, rounds: number): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  flushHeadersCoalesced(res);
  for (let round = 0; round < rounds; round++) {
    for (const frame of frames) {
      if (!res.write(frame)) await once(res, "drain");
    }
    // Frames of later event-loop turns too.
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** The raw bytes of one response, read slowly enough that the server's socket buffer fills. */
async function rawResponse(coalesce: boolean, rounds: number): Promise<{ bytes: Buffer; socketWrites: number }> {
  let socketWrites = 0;
  const server = createServer((_req, res) => {
    res.sendDate = false;
    const socket = res.socket as NonNullable<typeof res.socket>;
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((...args: unknown[]) => {
      socketWrites++;
      return write(...args);
    }) as typeof socket.write;
    if (coalesce) coalesceWritesPerTurn(res);
    void writeFrames(res, rounds);
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
  socket.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  const parts: Buffer[] = [];
  socket.on("data", (part: Buffer) => {
    parts.push(part);
    socket.pause();
    setTimeout(() => socket.resume(), 1);
  });
  await once(socket, "end");
  return { bytes: Buffer.concat(parts), socketWrites };
}

describe("coalesceWritesPerTurn", () => {
  it("writes the same bytes as Node's own res.write, chunk framing included, through full socket buffers", async () => {
    const plain = await rawResponse(false, 40);
    const coalesced = await rawResponse(true, 40);
    expect(coalesced.bytes.length).toBeGreaterThan(40 * 70_000);
    expect(coalesced.bytes.toString("latin1").endsWith("0\r\n\r\n")).toBe(true);
    expect(coalesced.bytes.equals(plain.bytes)).toBe(true);
    // Node writes a frame in four pieces (size, CRLF, data, CRLF); here each is one write ("" included, as Node does).
    expect(plain.socketWrites).toBeGreaterThanOrEqual(40 * 4 * 4);
    expect(coalesced.socketWrites).toBeLessThanOrEqual(40 * frames.length + 2);
  }, 60_000);
});

describe("flushHeadersCoalesced", () => {
  it("sends the headers and the frames written after them once the promise jobs ran, not at the turn's end", async () => {
    const seen: { corkedAtWrite: number; corkedAfterJobs: number; corkedAtTurnEnd: number }[] = [];
    const server = createServer((_req, res) => {
      coalesceWritesPerTurn(res);
      // As the listener writes a stream: the headers in a promise job, the first frames in the jobs after it.
      const headed = Promise.resolve().then(() => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        flushHeadersCoalesced(res);
      });
      void headed.then(() => {
        res.write("data: a\n\n");
        const socket = res.socket as NonNullable<typeof res.socket>;
        const entry = { corkedAtWrite: socket.writableCorked, corkedAfterJobs: -1, corkedAtTurnEnd: -1 };
        seen.push(entry);
        process.nextTick(() => {
          entry.corkedAfterJobs = socket.writableCorked;
        });
        setImmediate(() => {
          entry.corkedAtTurnEnd = socket.writableCorked;
          res.end();
        });
      });
    });
    servers.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    socket.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    const parts: Buffer[] = [];
    socket.on("data", (part: Buffer) => parts.push(part));
    await once(socket, "end");
    expect(Buffer.concat(parts).toString("latin1")).toContain("data: a\n\n");
    expect(seen).toEqual([{ corkedAtWrite: 1, corkedAfterJobs: 0, corkedAtTurnEnd: 0 }]);
  });
});
