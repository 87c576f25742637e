/**
 * `cursor-bridge serve` as the OpenCode plugin's child (CURSOR_BRIDGE_PARENT_IPC=stdio, see util/parent-ipc.ts):
 * access tokens come from the parent over stdio, and the child shuts down as soon as the parent is gone — its stdin
 * reaches EOF (the parent exited or was killed: the kernel closes the pipe) or its parent pid changes (polled, in case
 * the pipe outlives the parent in some grandchild).
 */
import type { Readable, Writable } from "node:stream";
import { ProxyError, type ProxyErrorCode } from "../util/errors.js";
import { createLineSplitter, type ParentReply, parseParentReply } from "../util/parent-ipc.js";
import type { TokenSource } from "../util/token-source.js";

const ERROR_CODES: readonly ProxyErrorCode[] = [
  "unauthenticated",
  "rate_limited",
  "backend_unavailable",
  "backend_protocol",
  "timeout",
  "canceled",
];

/** Options of {@link createParentLink}. */
export interface ParentLinkOptions {
  input: Readable;
  output: Writable;
  /** How long one token request may wait for the parent. @default 60000 */
  requestTimeoutMs?: number;
  /** @default process.ppid, polled every pollMs */
  ppid?: () => number;
  /** @default 250 */
  pollMs?: number;
}

/** The child's end of the channel. */
export interface ParentLink {
  tokenSource: TokenSource;
  /** Resolves once the parent is gone (stdin EOF or a new parent pid). */
  parentGone: Promise<void>;
  close(): void;
}

function replyError(reply: Extract<ParentReply, { ok: false }>): ProxyError {
  const code = ERROR_CODES.find((known) => known === reply.code) ?? "unauthenticated";
  return new ProxyError(code, reply.message);
}

/** Connects to the parent over the given streams (the process's stdin/stdout in production). */
export function createParentLink(options: ParentLinkOptions): ParentLink {
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const ppid = options.ppid ?? (() => process.ppid);
  const pending = new Map<number, { resolve: (token: string) => void; reject: (error: ProxyError) => void }>();
  const splitter = createLineSplitter();
  let nextId = 1;
  let gone = false;
  let markGone: () => void = () => {};
  const parentGone = new Promise<void>((resolve) => {
    markGone = resolve;
  });
  const onGone = (): void => {
    if (gone) return;
    gone = true;
    clearInterval(poll);
    for (const { reject } of pending.values()) {
      reject(new ProxyError("backend_unavailable", "The OpenCode plugin that started this bridge has exited."));
    }
    pending.clear();
    markGone();
  };
  const firstParent = ppid();
  const poll = setInterval(() => {
    if (ppid() !== firstParent) onGone();
  }, options.pollMs ?? 250);
  poll.unref();

  options.input.setEncoding("utf8");
  options.input.on("data", (chunk: string) => {
    for (const line of splitter.push(chunk)) {
      const reply = parseParentReply(line);
      const waiter = reply === undefined ? undefined : pending.get(reply.id);
      if (reply === undefined || waiter === undefined) continue;
      pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.accessToken);
      else waiter.reject(replyError(reply));
    }
  });
  options.input.once("end", onGone);
  options.input.once("close", onGone);
  options.input.once("error", onGone);

  const ask = (
    request: { op: "token" } | { op: "refresh"; rejected: string },
    signal?: AbortSignal,
  ): Promise<string> => {
    if (gone) return Promise.reject(new ProxyError("backend_unavailable", "The OpenCode plugin has exited."));
    const id = nextId++;
    return new Promise<string>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        pending.delete(id);
      };
      const onAbort = (): void => {
        finish();
        reject(new ProxyError("canceled", "The request was canceled while waiting for a Cursor token."));
      };
      const timer = setTimeout(() => {
        finish();
        reject(new ProxyError("timeout", "The OpenCode plugin did not supply a Cursor token in time."));
      }, timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      pending.set(id, {
        resolve: (token) => {
          finish();
          resolve(token);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      });
      options.output.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  };

  return {
    tokenSource: {
      getAccessToken: (signal) => ask({ op: "token" }, signal),
      refreshAfterUnauthenticated: (rejected, signal) => ask({ op: "refresh", rejected }, signal),
    },
    parentGone,
    close: () => {
      clearInterval(poll);
    },
  };
}
