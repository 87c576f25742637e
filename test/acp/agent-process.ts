/**
 * `cursor-bridge acp` as a process of its own, the way an editor runs it: spawned with `node bin/cursor-bridge.js
 * acp …` and spoken to over its stdin and stdout. Either line by line (raw JSON-RPC: what a test writes and every
 * line stdout carried) or through the ACP SDK's client (`connectEditor`). `stop()` ends stdin, as an editor closing
 * does, and kills the process only if it does not exit within the grace period.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type ClientApp,
  type ClientConnection,
  client,
  ndJsonStream,
  type SessionNotification,
} from "@agentclientprotocol/sdk";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

/** A JSON-RPC message the agent wrote on stdout. */
export interface RpcLine {
  jsonrpc?: string;
  id?: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export interface AcpProcess {
  readonly child: ChildProcess;
  /** Every non-empty line stdout carried so far (raw mode only). */
  readonly lines: string[];
  /** What stderr carried so far ("" when it is inherited). */
  stderr(): string;
  /** Writes one line to the agent's stdin. */
  send(text: string): void;
  /** The `count`-th reply with this id (raw mode), waiting up to `timeoutMs`. */
  reply(id: number | null, count?: number, timeoutMs?: number): Promise<RpcLine>;
  /** Ends stdin and waits for the exit; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface AcpProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Collect stdout as lines (raw JSON-RPC) instead of leaving it to an SDK client. @default true */
  rawStdout?: boolean;
  /** Collect stderr (for messages in failures) or show it. @default "pipe" */
  stderr?: "pipe" | "inherit";
}

/** Spawns `cursor-bridge acp` with `args`. */
export function spawnAcp(args: readonly string[], options: AcpProcessOptions): AcpProcess {
  const child = spawn(process.execPath, [BIN, "acp", ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", options.stderr ?? "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  if (options.rawStdout !== false) {
    let buffer = "";
    child.stdout?.setEncoding("utf8").on("data", (part: string) => {
      buffer += part;
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts.filter((line) => line !== ""));
    });
  }
  child.stderr?.setEncoding("utf8").on("data", (part: string) => {
    stderr += part;
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    send: (text) => {
      child.stdin?.write(`${text}\n`);
    },
    async reply(id, count = 1, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const replies = lines.map((line) => JSON.parse(line) as RpcLine).filter((r) => r.id === id);
        if (replies.length >= count) return replies[count - 1] as RpcLine;
        if (Date.now() > deadline) {
          throw new Error(`no reply ${String(id)}; stdout:\n${lines.join("\n")}\nstderr:\n${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * An editor on the agent's stdio through the SDK's client; every `session/update` is collected. `answer` registers
 * the editor's own request handlers (permission, fs, terminal) before it connects.
 */
export function connectEditor(
  agent: AcpProcess,
  name: string,
  answer?: (editor: ClientApp) => void,
): { connection: ClientConnection; updates: SessionNotification[] } {
  const updates: SessionNotification[] = [];
  const editor = client({ name }).onNotification("session/update", ({ params }) => {
    updates.push(params);
  });
  answer?.(editor);
  const { stdin, stdout } = agent.child;
  if (stdin === null || stdout === null) throw new Error("the agent's stdio is not piped");
  const connection = editor.connect(
    ndJsonStream(
      Writable.toWeb(stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(stdout) as ReadableStream<Uint8Array>,
    ),
  );
  return { connection, updates };
}
