/**
 * Real processes for the cluster test: the standalone emulator (`cursor-bridge emulator`), bridge instances
 * (`cursor-bridge serve --store redis://…`) and HAProxy in round-robin in front of them, each with its own temporary
 * directory and a free loopback port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTempHome } from "../../e2e/support/served-bridge.js";
import { listeningOrigin } from "../../support/processes.js";
import { freePort } from "./redis-server.js";

const BIN = fileURLToPath(new URL("../../../bin/cursor-bridge.js", import.meta.url));

/** A child process with its collected output. */
export interface Proc {
  child: ChildProcess;
  output(): string;
  /** SIGKILL, no cleanup (the point of a crash test). */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

function track(child: ChildProcess, cleanup: () => void): Proc {
  let output = "";
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (part: string) => (output += part));
  child.stderr?.on("data", (part: string) => (output += part));
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  const kill = async (signal: NodeJS.Signals) => {
    if (!ended()) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    cleanup();
  };
  return { child, output: () => output, crash: () => kill("SIGKILL"), stop: () => kill("SIGTERM") };
}

/** Polls `url` until it answers (any HTTP status, or only 200 when `ok`) or the process exits. */
export async function waitForHttp(url: string, proc: Proc, timeoutMs = 30_000, ok = false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`process exited early:\n${proc.output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (!ok || response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer in time:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `cursor-bridge emulator` accepting one Cursor API key, on a port it picks (`--port 0`, read from its output). */
export async function startStandaloneEmulator(apiKey: string): Promise<Proc & { url: string }> {
  const home = createTempHome("cluster-emulator");
  const child = spawn(process.execPath, [BIN, "emulator", "--port", "0", "--api-key", apiKey], {
    cwd: home.dir,
    env: home.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const proc = track(child, home.remove);
  try {
    return { ...proc, url: await listeningOrigin(child, "emulator", proc.output, 30_000) };
  } catch (error) {
    await proc.crash();
    throw error;
  }
}

/** One bridge instance on the shared store. */
export async function startInstance(options: {
  emulatorUrl: string;
  apiKey: string;
  store: string;
  secret: string;
  /** @default "info" (the test reads the access log) */
  logLevel?: string;
  /** More `serve` arguments (`--drain-timeout-ms 1000`). */
  args?: readonly string[];
}): Promise<Proc & { url: string; port: number }> {
  const port = await freePort();
  const home = createTempHome("cluster-instance");
  const args = [
    ...["serve", "--upstream", "cursor", "--cursor-api-url", options.emulatorUrl, "--port", String(port)],
    ...["--store", options.store, "--log-level", options.logLevel ?? "info"],
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: home.dir,
    env: { ...home.env, CURSOR_API_KEY: options.apiKey, CURSOR_BRIDGE_CLUSTER_SECRET: options.secret },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const proc = track(child, home.remove);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, proc);
  return { ...proc, url, port };
}

/** HAProxy in round-robin over `ports`, with fast health checks and redispatch on a refused connection. */
export async function startBalancer(ports: readonly number[]): Promise<Proc & { url: string }> {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-haproxy-"));
  const port = await freePort();
  const servers = ports.map((p, i) => `  server bridge${i} 127.0.0.1:${p} check inter 500ms fall 3 rise 1`);
  const config = [
    "global",
    "  maxconn 256",
    "defaults",
    "  mode http",
    "  option http-server-close",
    "  option redispatch 1",
    "  retries 3",
    "  timeout connect 1s",
    "  timeout client 60s",
    "  timeout server 60s",
    // Generous: on a loaded machine a slow /health must not take a live instance out of the rotation.
    "  timeout check 3s",
    "frontend balancer",
    `  bind 127.0.0.1:${port}`,
    "  default_backend bridges",
    "backend bridges",
    "  balance roundrobin",
    "  option httpchk GET /health",
    ...servers,
    "",
  ].join("\n");
  const path = join(dir, "haproxy.cfg");
  writeFileSync(path, config);
  const child = spawn("haproxy", ["-db", "-f", path], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const proc = track(child, () => rmSync(dir, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  // 200 only once HAProxy sees an instance up (it answers 503 itself before).
  await waitForHttp(`${url}/health`, proc, 30_000, true);
  return { ...proc, url };
}
