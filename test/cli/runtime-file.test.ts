/**
 * A running `serve` records where it listens (`<dataDir>/serve.json`, 0600, gone after it exits) and `setup` and
 * `doctor` use it when no port is given; a stale record (dead pid, or nothing answering) is ignored, `setup` warns
 * when nothing serves the address it prints, and `doctor --port P` with nothing there says how to start one. Also
 * the port-in-use error naming the cursor-bridge already listening there.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { isAlive } from "../support/processes.js";
import { type CliHarness, createCliHarness } from "./harness.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

let harness: CliHarness;
let dataDir: string;
/** The harness environment without its CURSOR_BRIDGE_PORT=0: "no port given". */
let noPort: Record<string, string | undefined>;

beforeAll(async () => {
  harness = await createCliHarness();
  dataDir = join(harness.home, "data");
  noPort = { CURSOR_BRIDGE_PORT: undefined, CURSOR_BRIDGE_DATA_DIR: dataDir };
});
afterAll(async () => {
  await harness?.close();
});

function runtimeFile(): string {
  return join(dataDir, "serve.json");
}

/** `serve` in a child process, as users run it; resolves with its port once it listens. */
function spawnServe(): Promise<{ child: ChildProcess; port: number }> {
  const env = { ...harness.env, ...noPort, CURSOR_BRIDGE_PORT: "0", NO_COLOR: "1" };
  const child = spawn(process.execPath, [BIN, "serve", "--upstream", "emulator", "--log-level", "silent", "--json"], {
    env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start; stderr: ${err}`)), 60_000);
    child.stderr?.setEncoding("utf8").on("data", (part: string) => (err += part));
    child.stdout?.setEncoding("utf8").on("data", (part: string) => {
      out += part;
      if (!out.includes("\n")) return;
      clearTimeout(timer);
      resolve({ child, port: Number(new URL((JSON.parse(out.split("\n")[0] ?? "") as { url: string }).url).port) });
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}; stderr: ${err}`)));
  });
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("runtime file", () => {
  it("serve writes it (0600), setup and doctor use it without --port, and it is gone after SIGTERM", async () => {
    const { child, port } = await spawnServe();
    try {
      await waitFor(() => existsSync(runtimeFile()), 10_000);
      expect(statSync(runtimeFile()).mode & 0o777).toBe(0o600);
      const record = JSON.parse(readFileSync(runtimeFile(), "utf8")) as { pid: number; port: number };
      expect(record).toMatchObject({ pid: child.pid, port });

      const setup = await harness.run(["setup", "claude-code"], { env: noPort });
      expect(setup.code, setup.err).toBe(0);
      expect(setup.out).toContain(`export ANTHROPIC_BASE_URL=http://127.0.0.1:${port}\n`);
      expect(setup.err).toContain(`Server: the cursor-bridge running at http://127.0.0.1:${port}`);
      expect(setup.err).not.toContain("Warning");

      const doctor = await harness.run(["doctor", "--json"], { env: noPort });
      const checks = (JSON.parse(doctor.out) as { checks: Array<{ id: string; status: string; detail: string }> })
        .checks;
      expect(checks.find((check) => check.id === "port")).toMatchObject({
        status: "ok",
        detail: expect.stringContaining(`127.0.0.1:${port} is served by cursor-bridge`),
      });
    } finally {
      child.kill("SIGTERM");
    }
    await waitFor(() => !isAlive(child.pid ?? 0), 10_000);
    expect(existsSync(runtimeFile())).toBe(false);
  }, 90_000);

  it("a stale record (dead pid) is ignored and setup warns that nothing serves the printed address", async () => {
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => dead.once("exit", resolve));
    writeFileSync(
      runtimeFile(),
      JSON.stringify({ pid: dead.pid, host: "127.0.0.1", port: 1, url: "http://127.0.0.1:1", version: "0" }),
      { mode: 0o600 },
    );
    const setup = await harness.run(["setup", "claude-code", "--port", "8799"], { env: noPort });
    expect(setup.out).toContain("ANTHROPIC_BASE_URL=http://127.0.0.1:8799\n");
    const unflagged = await harness.run(["setup", "claude-code"], { env: noPort });
    expect(unflagged.code).toBe(0);
    expect(unflagged.out).toContain("ANTHROPIC_BASE_URL=http://127.0.0.1:8765\n");
    expect(unflagged.err).toContain(
      "Warning: nothing serves http://127.0.0.1:8765 right now: start it with `cursor-bridge serve`",
    );
    // The OpenCode plugin starts its own bridge: no warning about a server it does not use.
    const plugin = await harness.run(["setup", "opencode-plugin"], { env: noPort });
    expect(plugin.code).toBe(0);
    expect(plugin.err).not.toContain("nothing serves");
    rmSync(runtimeFile(), { force: true });
  });

  it("doctor --port P with nothing running says how to start one", async () => {
    const doctor = await harness.run(["doctor", "--port", "8798"], { env: noPort });
    expect(doctor.out).toContain("no cursor-bridge is running on 127.0.0.1:8798");
    expect(doctor.out).toContain("no cursor-bridge is running; start it with `cursor-bridge serve --port 8798`");
  }, 30_000);
});

describe("port in use", () => {
  let first: RunningBridge;
  beforeAll(async () => {
    const io: CliIo = { out: () => {}, err: () => {}, isTty: false, env: harness.env };
    first = (await startBridge(io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent"])).bridge;
  });
  afterAll(async () => {
    await first?.close();
  });

  it("names the cursor-bridge already listening there", async () => {
    const port = new URL(first.server.url).port;
    const second = await harness.run(["serve", "--port", port, "--upstream", "emulator"]);
    expect(second.code).toBe(2);
    expect(second.err).toContain(`Port ${port} on 127.0.0.1 is already in use by cursor-bridge`);
    expect(second.err).toContain("`cursor-bridge setup <client>` finds it");
  });
});

describe("--emulator-port", () => {
  it("puts the embedded emulator on that port, and says so when it is taken", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    const refused = await harness.run(["serve", "--upstream", "emulator", "--emulator-port", String(port)]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`The embedded emulator's port ${port} on 127.0.0.1 is already in use`);
    await new Promise<void>((resolve) => taken.close(() => resolve()));

    let banner = "";
    const io: CliIo = { out: (text) => (banner += text), err: () => {}, isTty: false, env: harness.env };
    const started = await startBridge(io, ["--port", "0", "--upstream", "emulator", "--emulator-port", String(port)]);
    try {
      expect(banner).toContain(`Emulator at http://127.0.0.1:${port}`);
      const stats = await fetch(`http://127.0.0.1:${port}/emulator/stats`);
      expect(stats.status).toBe(200);
      await stats.text();
    } finally {
      await started.bridge.close();
    }
  });
});
