/**
 * Stopping `serve` (bin/cursor-bridge.js, a real process on the embedded emulator) with SIGTERM: new connections are
 * refused at once, a stream in flight finishes within the drain time, and when the drain time is up every stream
 * still open ends with its door's own shutting-down error event (a chat SSE error chunk, Anthropic's `event: error`
 * with `overloaded_error`, `response.failed`), a non-streaming request with its door's 503, and the process exits 0.
 * A request whose headers or body were still arriving at the signal is answered, not cut: one mid-headers gets its
 * door's 503 with `Connection: close`, one mid-body (already in flight) completes. A second signal ends the process at
 * once. No timing is asserted: each wait is for an event, with generous limits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

interface Serve {
  child: ChildProcess;
  origin: string;
  stderr(): string;
  exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function startServe(drainMs: number): Promise<Serve> {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-shutdown-"));
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--upstream", "emulator", "--drain-timeout-ms", String(drainMs)],
    {
      env: {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: join(home, "c"),
        XDG_DATA_HOME: join(home, "d"),
        CURSOR_BRIDGE_LOG_LEVEL: "info",
        NO_COLOR: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? (signal === null ? null : -1))),
  );
  const origin = await listeningOrigin(child, "serve", () => stderr);
  expect((await fetch(`${origin}/health`)).status).toBe(200);
  return { child, origin, stderr: () => stderr, exit };
}

/** Resolves when `check` holds (checked every 20 ms; the test's own timeout bounds the wait). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A streamed request: its text so far, and the whole text once the stream is over ("<cut>" when it broke). */
function stream(origin: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  let text = "";
  const done = (async () => {
    const response = await fetch(`${origin}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    try {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        text += Buffer.from(read.value).toString();
      }
    } catch {
      text += "<cut>";
    }
    return text;
  })();
  return { done, text: () => text };
}

const ANTHROPIC = { "anthropic-version": "2023-06-01" };

/** The `data:` payloads of an SSE text, parsed (`[DONE]` left out). */
function payloads(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

async function refusedCode(origin: string): Promise<string | undefined> {
  return fetch(`${origin}/health`).then(
    (response) => `answered ${response.status}`,
    (error: Error & { cause?: { code?: string } }) => error.cause?.code,
  );
}

/**
 * A raw connection to `origin` that has had one `/health` answered and has sent `next` after it, in the same write:
 * once the answer is read, serve has parsed `next` too (Node's parser reads the whole chunk), so a request half sent
 * in `next` is known to be under way at the server.
 */
async function connectionWith(origin: string, next: string): Promise<{ socket: Socket; answer: Promise<string> }> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
  socket.on("error", () => {});
  const answer = new Promise<string>((resolve) => socket.once("close", () => resolve(text)));
  socket.write(`GET /health HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n${next}`);
  await until(() => /\r\n\r\n\{[\s\S]*\}/.test(text));
  const health = text;
  return { socket, answer: answer.then((all) => all.slice(health.length)) };
}

describe("serve on SIGTERM", () => {
  it("refuses new connections at once, lets a stream in flight finish, and exits 0", async () => {
    const serve = await startServe(120_000);
    // 100 tokens at 10 a second: about ten seconds in flight after its first token.
    const chat = stream(serve.origin, "/v1/chat/completions", {
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: "drain me [[emu:tokens 100]] [[emu:rate 10]]" }],
    });
    await until(() => chat.text().includes('"content"'));
    serve.child.kill("SIGTERM");
    await until(() => serve.stderr().includes("draining 1 request, up to 120 s"));
    expect(await refusedCode(serve.origin)).toBe("ECONNREFUSED");

    const text = await chat.done;
    expect(text).not.toContain("<cut>");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const frames = payloads(text);
    expect(frames.some((frame) => "error" in frame)).toBe(false);
    const choices = frames.flatMap((frame) => (frame.choices ?? []) as Array<{ finish_reason?: string | null }>);
    expect(choices.at(-1)?.finish_reason).toBe("stop");
    expect(await serve.exit, serve.stderr()).toBe(0);
    expect(serve.stderr()).toContain("stopped");
    expect(serve.stderr()).not.toContain("drain time");
  }, 120_000);

  it("ends every door's stream still open at the drain time with its own shutting-down error, then exits 0", async () => {
    const serve = await startServe(1_000);
    const stall = (text: string) => `${text} [[emu:stall 2]]`;
    // A turn parked on a tool call: closed at shutdown, as every parked turn.
    const parked = await fetch(`${serve.origin}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "auto",
        messages: [{ role: "user", content: "[[emu:tool lookup {}]]" }],
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      }),
    });
    expect(((await parked.json()) as { choices: Array<{ finish_reason: string }> }).choices[0]?.finish_reason).toBe(
      "tool_calls",
    );
    // Sent first: it shows nothing before it ends, and the streams below show it was in by the time they answer.
    const whole = fetch(`${serve.origin}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: stall("not streamed") }] }),
    });
    const chat = stream(serve.origin, "/v1/chat/completions", {
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: stall("chat words here") }],
    });
    const messages = stream(
      serve.origin,
      "/v1/messages",
      { model: "claude-sonnet-4-5", max_tokens: 100, stream: true, messages: [{ role: "user", content: stall("hi") }] },
      ANTHROPIC,
    );
    const responses = stream(serve.origin, "/v1/responses", {
      model: "auto",
      stream: true,
      input: stall("responses words here"),
    });
    await until(
      () =>
        chat.text().includes('"content"') &&
        messages.text().includes("content_block_delta") &&
        responses.text().includes("response.output_text.delta"),
    );
    serve.child.kill("SIGTERM");

    const chatFrames = payloads(await chat.done);
    expect(chatFrames.at(-1)).toMatchObject({
      error: { type: "server_error", code: "server_shutting_down", message: expect.stringMatching(/shutting down/) },
    });
    const messagesText = await messages.done;
    expect(messagesText).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"overloaded_error"/);
    expect(payloads(messagesText).at(-1)).toMatchObject({
      type: "error",
      error: { type: "overloaded_error", message: expect.stringMatching(/shutting down/) },
    });
    const responsesText = await responses.done;
    expect(responsesText).toContain("event: response.failed");
    expect(payloads(responsesText).at(-1)).toMatchObject({
      type: "response.failed",
      response: { status: "failed", error: { code: "server_shutting_down" } },
    });
    const answer = await whole;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("x-should-retry")).toBe("true");
    expect(await answer.json()).toMatchObject({ error: { code: "server_shutting_down" } });

    expect(await serve.exit, serve.stderr()).toBe(0);
    expect(serve.stderr()).toContain("drain time (1 s) is up: ending 4 requests with a shutting-down error");
  }, 120_000);

  it("answers a request whose headers were still arriving (503, Connection: close) and lets one mid-body finish", async () => {
    const serve = await startServe(120_000);
    const { hostname, port } = new URL(serve.origin);
    const head = (length: number) =>
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\n`;
    const body = JSON.stringify({ model: "auto", messages: [{ role: "user", content: "half sent" }] });
    // Mid-headers: the request line and some headers, not the blank line that ends them.
    const midHeaders = await connectionWith(serve.origin, head(body.length));
    // Mid-body: the headers and half of the body.
    const half = Math.floor(body.length / 2);
    const midBody = await connectionWith(serve.origin, `${head(body.length)}\r\n${body.slice(0, half)}`);

    serve.child.kill("SIGTERM");
    await until(() => serve.stderr().includes("draining 1 request"));
    // Both connections are still open: the rest arrives now.
    midHeaders.socket.write(`\r\n${body}`);
    midBody.socket.write(body.slice(half));

    const refused = await midHeaders.answer;
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.toLowerCase()).toContain("connection: close");
    expect(refused).toContain('"code":"server_shutting_down"');
    const finished = await midBody.answer;
    expect(finished).toMatch(/^HTTP\/1\.1 200 /);
    expect(finished).toContain("You said: half sent");
    expect(await serve.exit, serve.stderr()).toBe(0);
  }, 120_000);

  it("answers a request whose headers were still arriving when nothing else was in flight", async () => {
    const serve = await startServe(120_000);
    const { hostname, port } = new URL(serve.origin);
    const body = JSON.stringify({ model: "auto", messages: [{ role: "user", content: "late" }] });
    const midHeaders = await connectionWith(
      serve.origin,
      `POST /v1/messages HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n`,
    );
    serve.child.kill("SIGTERM");
    // The server has stopped listening (it drains); the connection stays open for the rest of the request.
    while ((await refusedCode(serve.origin)) !== "ECONNREFUSED")
      await new Promise((resolve) => setTimeout(resolve, 20));
    midHeaders.socket.write(`Content-Length: ${body.length}\r\n\r\n${body}`);
    const refused = await midHeaders.answer;
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.toLowerCase()).toContain("connection: close");
    expect(refused).toContain('"type":"overloaded_error"');
    expect(await serve.exit, serve.stderr()).toBe(0);
  }, 120_000);

  it("exits at once on a second signal", async () => {
    const serve = await startServe(600_000);
    const chat = stream(serve.origin, "/v1/chat/completions", {
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: "stuck [[emu:stall 2]]" }],
    });
    await until(() => chat.text().includes('"content"'));
    serve.child.kill("SIGTERM");
    await until(() => serve.stderr().includes("draining 1 request"));
    serve.child.kill("SIGTERM");
    // 128 + 15: the shell's code of a process ended by SIGTERM (the drain would have lasted ten minutes).
    expect(await serve.exit, serve.stderr()).toBe(143);
    expect(serve.stderr()).toContain("received SIGTERM again: exiting now");
    expect(await chat.done).toContain("<cut>");
  }, 120_000);
});
