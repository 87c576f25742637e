/**
 * A body far over the limit (70 MiB, more than the 64 MiB @hono/node-server drains after an answer) still gets a
 * readable answer on every path, declared or chunked: the bridge reads it to its end, keeping nothing, before it
 * answers 413 (or the 404 of a path that does not exist). The client here is the least forgiving kind: it sends for
 * about two seconds and reads only once it has sent everything, so an answer followed by a close while it still
 * sends would reach it as a reset (EPIPE, ECONNRESET).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { HTTP_DOORS } from "./doors.js";

const MIB = 1024 * 1024;
const SIZE = 70 * MIB;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

/** Sends the whole request, then reads the whole answer: its status line and body, or the socket error. */
function sendThenRead(path: string, chunked: boolean): Promise<{ status: string; body: string; error?: string }> {
  const { hostname, port } = new URL(stack.server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let error: string | undefined;
    socket.on("error", (e: NodeJS.ErrnoException) => {
      error = e.code ?? e.message;
    });
    const chunk = Buffer.alloc(MIB, 32);
    const frame = chunked ? Buffer.concat([Buffer.from(`${MIB.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk;
    const head =
      `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
      `anthropic-version: 2023-06-01\r\n${chunked ? "transfer-encoding: chunked" : `content-length: ${SIZE}`}\r\n\r\n`;
    let sent = 0;
    let answer = "";
    socket.on("close", () =>
      resolve({
        status: answer.split("\r\n")[0] ?? "",
        body: answer.slice(answer.indexOf("\r\n\r\n") + 4),
        ...(error === undefined ? {} : { error }),
      }),
    );
    const write = () => {
      if (socket.destroyed) return;
      if (sent === 0) socket.write(head);
      if (sent < SIZE) {
        sent += MIB;
        // About 40 MiB/s: the upload outlasts the half second @hono/node-server gives a drain after an answer.
        if (socket.write(frame)) setTimeout(write, 25);
        else socket.once("drain", () => setTimeout(write, 25));
        return;
      }
      if (chunked) socket.write("0\r\n\r\n");
      // Only now does it read.
      socket.on("data", (data: Buffer) => {
        answer += data.toString("latin1");
        const split = answer.indexOf("\r\n\r\n");
        const length = /content-length: (\d+)/i.exec(answer.slice(0, split));
        if (split >= 0 && length !== null && answer.length >= split + 4 + Number(length[1])) socket.end();
      });
    };
    socket.once("connect", write);
  });
}

describe("a 70 MiB body", () => {
  const paths = [...HTTP_DOORS.map((door) => door.path), "/v1/messages/count_tokens", "/v1/models", "/nowhere"];
  for (const path of paths) {
    for (const chunked of [false, true]) {
      it(`${path}, ${chunked ? "chunked" : "declared"}: a readable answer, never a reset`, async () => {
        const answer = await sendThenRead(path, chunked);
        expect(answer.error).toBeUndefined();
        expect(answer.status).toBe(path === "/nowhere" ? "HTTP/1.1 404 Not Found" : "HTTP/1.1 413 Payload Too Large");
        const body = JSON.parse(answer.body) as { error: { message: string } };
        expect(body.error.message).toMatch(path === "/nowhere" ? /No route/ : /larger than \d+ bytes/);
      }, 60_000);
    }
  }
});
