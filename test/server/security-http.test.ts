/**
 * The browser-facing guards over a real socket (the Host header comes from the wire here, not from a test URL), and
 * the body timeout: a request whose body stalls mid-way is answered 408 and dropped, not held for minutes.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const stacks: Stack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

/** Sends raw bytes and collects everything until the server closes the connection (or `timeoutMs`). */
function raw(port: number, text: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${JSON.stringify(received)}`));
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("data", (part: string) => (received += part));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on("error", () => {});
    socket.write(text);
  });
}

const body = JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hello" }] });
const request = (headers: string[], payload = body) =>
  `POST /v1/chat/completions HTTP/1.1\r\n${headers.join("\r\n")}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`;

function statusAndError(response: string): { status: number; code: string | undefined } {
  const status = Number(response.match(/^HTTP\/1\.1 (\d{3})/)?.[1]);
  const json = response.slice(response.indexOf("\r\n\r\n") + 4);
  return { status, code: (JSON.parse(json) as { error?: { code?: string } }).error?.code };
}

describe("browser guards over a socket", () => {
  it("refuses a DNS-rebound Host, a foreign Origin and a text/plain body; serves loopback JSON", async () => {
    const s = await startStack();
    stacks.push(s);
    const port = s.server.port;
    const rebound = await raw(port, request(["Host: attacker.example:8765", "Content-Type: application/json"]));
    expect(statusAndError(rebound)).toEqual({ status: 403, code: "host_not_allowed" });
    const foreign = await raw(
      port,
      request([`Host: 127.0.0.1:${port}`, "Origin: https://evil.example", "Content-Type: application/json"]),
    );
    expect(statusAndError(foreign)).toEqual({ status: 403, code: "origin_not_allowed" });
    const simple = await raw(port, request([`Host: localhost:${port}`, "Content-Type: text/plain;charset=UTF-8"]));
    expect(statusAndError(simple)).toEqual({ status: 415, code: "unsupported_media_type" });
    expect(s.emulator.stats().turns.length).toBe(0);
    const ok = await raw(
      port,
      request([`Host: 127.0.0.1:${port}`, `Origin: http://127.0.0.1:${port}`, "Content-Type: application/json"]),
    );
    expect(ok).toMatch(/^HTTP\/1\.1 200/);
  });

  it("answers 408 with an OpenAI error body when the request body stalls, within the body timeout", async () => {
    const s = await startStack({ bodyTimeoutMs: 300 });
    stacks.push(s);
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const response = await raw(s.server.port, head + body.slice(0, 10), 10_000);
    expect(statusAndError(response)).toEqual({ status: 408, code: "request_timeout" });
    expect(s.emulator.stats().turns.length).toBe(0);
  });

  it("answers a stalled body on /v1/messages in Anthropic's shape", async () => {
    const s = await startStack({ bodyTimeoutMs: 300 });
    stacks.push(s);
    const head = `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const response = await raw(s.server.port, head + body.slice(0, 10), 10_000);
    expect(response).toMatch(/^HTTP\/1\.1 408/);
    expect(JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4))).toEqual({
      type: "error",
      error: { type: "timeout_error", message: "The request body did not arrive in time; the request was dropped." },
    });
  });
});
