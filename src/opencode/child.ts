/**
 * The cursor-bridge server behind the plugin: `node bin/cursor-bridge.js serve` as a child process of OpenCode. It
 * runs under Node, not OpenCode's Bun (Bun's `node:http2` client is not reliable against Cursor), on a free loopback
 * port with a random per-run API key, and takes its Cursor access tokens from the plugin over its stdio
 * (util/parent-ipc.ts). It watches this process: the stdin pipe closing (any exit of OpenCode, `kill -9` included)
 * or a changed parent pid ends it.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { ProxyError } from "../util/errors.js";
import {
  createLineSplitter,
  PARENT_IPC_ENV,
  PARENT_IPC_STDIO,
  type ParentReply,
  type ParentRequest,
  parseParentRequest,
} from "../util/parent-ipc.js";
import type { TokenSource } from "../util/token-source.js";

/** Oldest Node major the bridge supports (package.json `engines`). */
export const MIN_NODE_MAJOR = 20;
const STDERR_TAIL_BYTES = 8 * 1024;

/** A running child. */
export interface BridgeChild {
  /** `http://127.0.0.1:PORT/v1` */
  baseURL: string;
  /** The per-run local API key the child requires. */
  apiKey: string;
  pid: number;
  /** True once the child has exited. */
  exited(): boolean;
  stop(): void;
}

/** Options of {@link startBridgeChild}. */
export interface BridgeChildOptions {
  /** Absolute path of bin/cursor-bridge.js. */
  binPath: string;
  tokenSource: TokenSource;
  /** The environment the child inherits (OpenCode's, so CURSOR_API_URL and friends apply). */
  env: Readonly<Record<string, string | undefined>>;
  /** @default 60000 (a cold start compiles the TypeScript sources) */
  startTimeoutMs?: number;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `CURSOR_BRIDGE_NODE`, else the first `node` on PATH. */
export function locateNode(env: Readonly<Record<string, string | undefined>>, platform = process.platform): string {
  const explicit = env.CURSOR_BRIDGE_NODE;
  if (explicit !== undefined && explicit !== "") return explicit;
  const names = platform === "win32" ? ["node.exe", "node.cmd"] : ["node"];
  for (const dir of (env.PATH ?? env.Path ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const name of names) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  throw new ProxyError(
    "backend_unavailable",
    `The cursor-bridge OpenCode plugin needs Node.js ${MIN_NODE_MAJOR} or newer on PATH (it runs the bridge under Node); none was found. Install Node.js, or set CURSOR_BRIDGE_NODE to its path.`,
  );
}

/** Resolves when `node` is at least {@link MIN_NODE_MAJOR}; rejects with a clear message otherwise. */
export function checkNodeVersion(node: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(node, ["-p", "process.versions.node"], { timeout: 15_000 }, (error, stdout) => {
      const version = String(stdout).trim();
      const major = Number(version.split(".")[0]);
      if (error === null && Number.isInteger(major) && major >= MIN_NODE_MAJOR) {
        resolve();
        return;
      }
      const found = error === null ? `found Node.js ${version}` : `could not run ${node}: ${error.message}`;
      reject(
        new ProxyError(
          "backend_unavailable",
          `The cursor-bridge OpenCode plugin needs Node.js ${MIN_NODE_MAJOR} or newer (${found}). Put a newer node first on PATH, or set CURSOR_BRIDGE_NODE to its path.`,
        ),
      );
    });
  });
}

/** Answers one token request of the child. */
async function answer(request: ParentRequest, tokenSource: TokenSource): Promise<ParentReply> {
  try {
    const accessToken =
      request.op === "token"
        ? await tokenSource.getAccessToken()
        : await tokenSource.refreshAfterUnauthenticated(request.rejected);
    return { id: request.id, ok: true, accessToken };
  } catch (error) {
    const proxyError = ProxyError.from(error);
    return { id: request.id, ok: false, code: proxyError.code, message: proxyError.message };
  }
}

/** Lets OpenCode exit while the child runs: the child ends on its own when this process is gone. */
function unrefAll(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
}

/** Starts the child and resolves once it listens. */
export async function startBridgeChild(options: BridgeChildOptions): Promise<BridgeChild> {
  const node = locateNode(options.env);
  await checkNodeVersion(node);
  const apiKey = randomBytes(24).toString("base64url");
  const args = [options.binPath, "serve", "--host", "127.0.0.1", "--port", "0", "--json", "--upstream", "cursor"];
  const child = spawn(node, [...args, "--log-level", "warn"], {
    env: { ...options.env, [PARENT_IPC_ENV]: PARENT_IPC_STDIO, CURSOR_BRIDGE_API_KEY: apiKey },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (part: string) => {
    stderr = (stderr + part).slice(-STDERR_TAIL_BYTES);
  });
  child.stdin?.on("error", () => {});
  let exited = false;
  const stop = (): void => {
    if (!exited) child.kill("SIGTERM");
  };
  process.once("exit", stop);
  child.once("exit", () => {
    exited = true;
    process.off("exit", stop);
  });
  unrefAll(child);

  const splitter = createLineSplitter();
  const baseURL = await new Promise<string>((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      stop();
      reject(new ProxyError("timeout", `cursor-bridge did not start in time.\n${stderr.trim()}`));
    }, options.startTimeoutMs ?? 60_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new ProxyError("backend_unavailable", `cursor-bridge could not be started: ${error.message}`));
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!started) {
        reject(
          new ProxyError(
            "backend_unavailable",
            `cursor-bridge exited (${signal ?? code}) while starting.\n${stderr.trim()}`,
          ),
        );
      }
    });
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      for (const line of splitter.push(chunk)) {
        if (!started) {
          try {
            const url = (JSON.parse(line) as { url?: unknown }).url;
            if (typeof url !== "string") throw new Error("no url");
            started = true;
            clearTimeout(timer);
            resolve(url);
          } catch {
            stop();
            reject(
              new ProxyError(
                "backend_protocol",
                `cursor-bridge printed an unexpected first line: ${line.slice(0, 200)}`,
              ),
            );
          }
          continue;
        }
        const request = parseParentRequest(line);
        if (request === undefined) continue;
        void answer(request, options.tokenSource).then((reply) => {
          if (!exited) child.stdin?.write(`${JSON.stringify(reply)}\n`);
        });
      }
    });
  });
  return { baseURL, apiKey, pid: child.pid ?? -1, exited: () => exited, stop };
}
