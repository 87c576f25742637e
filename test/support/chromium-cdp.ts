/**
 * Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: commands on fd 3,
 * answers and events on fd 4, each a JSON message ended by a NUL byte), so a test can type into a page, click and
 * read the DOM back, and see every request the page made. No driver library: a few protocol methods are enough.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

/** A request the page sent, as the browser saw it. */
export interface SeenRequest {
  url: string;
  headers: Record<string, string>;
}

/** One page in a headless browser. */
export interface BrowserPage {
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>;
  /** Evaluates an expression in the page (promises awaited) and returns its JSON value. */
  evaluate<T>(expression: string): Promise<T>;
  /** Polls `expression` until it is truthy (bounded); returns its value. */
  waitFor<T>(expression: string, timeoutMs?: number): Promise<T>;
  /** Every request the page sent so far. */
  requests: SeenRequest[];
  close(): Promise<void>;
}

type Message = { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };

/** Starts Chromium (`binary`) with a fresh profile and opens one page. */
export async function openBrowserPage(binary: string): Promise<BrowserPage> {
  const profile = mkdtempSync(join(tmpdir(), "cursor-bridge-cdp-"));
  const sandbox = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  const child: ChildProcess = spawn(
    binary,
    [
      "--headless",
      "--disable-gpu",
      "--no-first-run",
      `--user-data-dir=${profile}`,
      "--remote-debugging-pipe",
      ...sandbox,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
  );
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const listeners: Array<(message: Message) => void> = [];
  let buffer = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf("\0"); end >= 0; end = buffer.indexOf("\0")) {
      const message = JSON.parse(buffer.slice(0, end)) as Message;
      buffer = buffer.slice(end + 1);
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error !== undefined) waiter?.reject(new Error(JSON.stringify(message.error)));
        else waiter?.resolve(message.result);
      } else for (const listener of listeners) listener(message);
    }
  });
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`${method}: no answer from Chromium`)), 60_000);
      pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as Record<string, unknown>);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      input.write(`${JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) })}\0`);
    });

  const { targetId } = (await send("Target.createTarget", { url: "about:blank" })) as { targetId: string };
  const { sessionId } = (await send("Target.attachToTarget", { targetId, flatten: true })) as { sessionId: string };
  const requests: SeenRequest[] = [];
  let loaded: (() => void) | undefined;
  listeners.push((message) => {
    if (message.method === "Network.requestWillBeSent") {
      const request = (message.params as { request: SeenRequest }).request;
      requests.push({ url: request.url, headers: request.headers });
    }
    if (message.method === "Page.loadEventFired") loaded?.();
  });
  await send("Page.enable", {}, sessionId);
  await send("Network.enable", {}, sessionId);

  const evaluate = async <T>(expression: string): Promise<T> => {
    const answer = (await send(
      "Runtime.evaluate",
      { expression, awaitPromise: true, returnByValue: true },
      sessionId,
    )) as { result: { value?: unknown }; exceptionDetails?: unknown };
    if (answer.exceptionDetails !== undefined) throw new Error(`evaluate: ${JSON.stringify(answer.exceptionDetails)}`);
    return answer.result.value as T;
  };
  return {
    requests,
    async goto(url) {
      const done = new Promise<void>((resolve) => (loaded = resolve));
      await send("Page.navigate", { url }, sessionId);
      await done;
    },
    evaluate,
    async waitFor<T>(expression: string, timeoutMs = 30_000): Promise<T> {
      const started = Date.now();
      for (;;) {
        const value = await evaluate<T>(expression);
        if (value) return value;
        if (Date.now() - started > timeoutMs) throw new Error(`still false after ${timeoutMs} ms: ${expression}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async close() {
      await send("Browser.close").catch(() => undefined);
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else {
          const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
        }
      });
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
