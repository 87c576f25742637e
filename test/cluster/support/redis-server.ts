/**
 * A real `redis-server` for tests: its own temporary directory, a free loopback port, no persistence. Tests that
 * need it skip with a printed reason when the binary is missing, unless CI=true (then they fail).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether a binary is on PATH. */
export function hasBinary(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The reason to skip when a binary is missing (undefined when present); throws under CI=true. */
export function missingBinaries(...names: string[]): string | undefined {
  const missing = names.filter((name) => !hasBinary(name));
  if (missing.length === 0) return undefined;
  const reason = `${missing.join(" and ")} not installed (Debian: apt-get install ${missing.join(" ")})`;
  if (process.env.CI === "true") throw new Error(`CI=true but ${reason}`);
  console.warn(`skipping: ${reason}`);
  return reason;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A running redis-server. */
export interface RedisServer {
  port: number;
  url: string;
  /**
   * Stops the server: `hard` = SIGKILL, `keep` = SHUTDOWN SAVE first so `start()` brings it back on the same port
   * with the same keys (an outage rather than a wipe).
   */
  stop(how?: "hard" | "keep"): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function waitForPing(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      // Any answer means it is up (-NOAUTH from one started with --requirepass).
      const answer = execFileSync("redis-cli", ["-p", String(port), "ping"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      });
      if (answer.trim() === "PONG" || answer.includes("NOAUTH")) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer PING`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Starts it as a Redis Cluster node (`--cluster-enabled yes`, its nodes.conf in its directory; no slots). */
  cluster?: boolean;
}

/** Starts redis-server on a free port; `extraArgs` are added to its command line (`--requirepass`, …). */
export async function startRedisServer(
  extraArgs: readonly string[] = [],
  options: RedisServerOptions = {},
): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-redis-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
  if (options.cluster === true) {
    args.push("--cluster-enabled", "yes", "--cluster-config-file", join(dir, "nodes.conf"));
  }
  args.push(...extraArgs);
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn("redis-server", args, { stdio: "ignore" });
    await waitForPing(port);
  };
  const stop = async (how?: "hard" | "keep") => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    if (how === "keep") {
      try {
        execFileSync("redis-cli", ["-p", String(port), "shutdown", "save"], { stdio: "ignore" });
      } catch {
        // redis-cli reports the dropped connection of a shutdown as an error
      }
    } else running.kill(how === "hard" ? "SIGKILL" : "SIGTERM");
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
