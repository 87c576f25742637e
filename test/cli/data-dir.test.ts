/**
 * The data directory of the file stores, as real `serve`, `keys` and `acp` processes see it (bin/cursor-bridge.js):
 * one `serve` per data directory (a second refuses to start and names the first; a lock whose process was killed is
 * taken over; `acp` still shares the directory), and a directory that cannot be used stops `serve` before its banner
 * and `keys` with a message naming --data-dir and the cause, exit 2, never a raw errno nor an endless mkdir.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { lockDataDir, prepareDataDir } from "../../src/cli/data-dir.js";
import { spawnAcp } from "../acp/agent-process.js";
import { listeningOrigin } from "../support/processes.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "cursor-bridge-data-dir-"));
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: join(home, "c"),
  XDG_DATA_HOME: join(home, "d"),
  CURSOR_BRIDGE_LOG_LEVEL: "info",
  NO_COLOR: "1",
};

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

interface Run {
  child: ChildProcess;
  out(): string;
  err(): string;
  exit: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

const serveArgs = (dataDir: string) => ["serve", "--port", "0", "--upstream", "emulator", "--data-dir", dataDir];

async function startServe(dataDir: string): Promise<Run & { origin: string }> {
  const serve = run(serveArgs(dataDir));
  const origin = await listeningOrigin(serve.child, "serve", serve.err);
  expect((await fetch(`${origin}/health`)).status).toBe(200);
  return { ...serve, origin };
}

describe("one serve per data directory", { timeout: 120_000 }, () => {
  it("refuses a second serve on the same data directory, naming the first, and exits 2", async () => {
    const dataDir = join(home, "shared");
    const first = await startServe(dataDir);
    const port = new URL(first.origin).port;
    const lock = JSON.parse(readFileSync(join(dataDir, "serve.lock"), "utf8")) as { pid: number; port: number };
    expect(lock).toMatchObject({ pid: first.child.pid, port: Number(port) });

    const second = run(serveArgs(dataDir));
    expect(await second.exit).toBe(2);
    expect(second.out()).not.toContain("listening on");
    const message = second.err();
    expect(message).toContain(`pid ${first.child.pid}`);
    expect(message).toContain(`port ${port}`);
    expect(message).toContain("--data-dir");
    expect(message).toContain("redis://");
    expect(message).not.toMatch(/\n\s+at /);
    // The first is untouched: still serving, its lock and serve.json still its own.
    expect((await fetch(`${first.origin}/health`)).status).toBe(200);
    expect(JSON.parse(readFileSync(join(dataDir, "serve.json"), "utf8")).pid).toBe(first.child.pid);

    // Another data directory is fine meanwhile.
    const other = await startServe(join(home, "other"));
    other.child.kill("SIGTERM");
    expect(await other.exit).toBe(0);

    // A graceful stop releases the lock: the next serve starts.
    first.child.kill("SIGTERM");
    expect(await first.exit).toBe(0);
    expect(existsSync(join(dataDir, "serve.lock"))).toBe(false);
    const third = await startServe(dataDir);
    third.child.kill("SIGTERM");
    expect(await third.exit).toBe(0);
  });

  it("takes over the lock of a serve that was killed", async () => {
    const dataDir = join(home, "killed");
    const first = await startServe(dataDir);
    first.child.kill("SIGKILL");
    await first.exit;
    expect(JSON.parse(readFileSync(join(dataDir, "serve.lock"), "utf8")).pid).toBe(first.child.pid);
    const next = await startServe(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, "serve.lock"), "utf8")).pid).toBe(next.child.pid);
    next.child.kill("SIGTERM");
    expect(await next.exit).toBe(0);
  });

  it("lets acp share the data directory of a running serve", async () => {
    const dataDir = join(home, "with-acp");
    const serve = await startServe(dataDir);
    const agent = spawnAcp(["--upstream", "emulator", "--data-dir", dataDir], { cwd: home, env });
    try {
      agent.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }));
      const init = await agent.reply(1, 1, 60_000);
      expect(init.error, agent.stderr()).toBeUndefined();
      agent.send(
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: home, mcpServers: [] } }),
      );
      const session = await agent.reply(2, 1, 60_000);
      expect(session.error, agent.stderr()).toBeUndefined();
    } finally {
      await agent.stop(5000);
    }
    expect((await fetch(`${serve.origin}/health`)).status).toBe(200);
    serve.child.kill("SIGTERM");
    expect(await serve.exit).toBe(0);
  });
});

describe("a lock written by another process", { timeout: 120_000 }, () => {
  const address = { host: "127.0.0.1", port: 4321 };
  const lockIn = (name: string, lock: Record<string, unknown>) => {
    const dataDir = join(home, name);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "serve.lock"), `${JSON.stringify(lock)}\n`);
    return dataDir;
  };
  const ownerOf = (dataDir: string) => JSON.parse(readFileSync(join(dataDir, "serve.lock"), "utf8"));
  /** The pid of a process that has exited. */
  const deadPid = () => {
    const done = spawnSync(process.execPath, ["-e", ""]);
    expect(done.status).toBe(0);
    return done.pid;
  };

  it("of another host is refused, naming the host, pid and port, even with our own pid (two containers' pid 1)", async () => {
    for (const pid of [process.pid, deadPid()]) {
      const lock = { pid, hostname: `not-${hostname()}`, instance: "theirs", host: "0.0.0.0", port: 8765 };
      const dataDir = lockIn(`other-host-${pid}`, lock);
      const error = await lockDataDir(dataDir, address).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).toContain(`pid ${pid}, on host not-${hostname()}, port 8765`);
      expect(error?.message).toContain(`if that server is gone, remove ${join(dataDir, "serve.lock")}`);
      expect(ownerOf(dataDir)).toEqual(lock);
    }
    // Through the CLI: exit 2 with that message, the lock untouched.
    const lock = { pid: 1, hostname: "elsewhere", instance: "theirs", host: "0.0.0.0", port: 8765 };
    const dataDir = lockIn("other-host-cli", lock);
    const serve = run(serveArgs(dataDir));
    expect(await serve.exit).toBe(2);
    expect(serve.err()).toContain("pid 1, on host elsewhere, port 8765");
    expect(serve.err()).toContain(`remove ${join(dataDir, "serve.lock")}`);
    expect(ownerOf(dataDir)).toEqual(lock);
  });

  it("of an older version (no host named) is refused whatever its pid: another container's cannot be told apart", async () => {
    // Two containers sharing the data volume both run serve as pid 1: an older version's lock may be the other
    // container's live server, whose pid here is ours, or gone, or another process. Each is refused.
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    children.push(other);
    for (const pid of [deadPid(), other.pid as number, process.pid]) {
      const unnamed = { pid, port: 1, startedAt: "2026-01-01T00:00:00.000Z" };
      const dataDir = lockIn(`no-host-${pid}`, unnamed);
      await expect(lockDataDir(dataDir, address)).rejects.toThrow(
        `pid ${pid}, on a machine its lock (an older version's) does not name, port 1`,
      );
      expect(ownerOf(dataDir)).toEqual(unnamed);
    }
    // Through the CLI: exit 2, saying what to remove once that server is gone.
    const unnamed = { pid: deadPid(), port: 8765, startedAt: "2026-01-01T00:00:00.000Z" };
    const dataDir = lockIn("no-host-cli", unnamed);
    const serve = run(serveArgs(dataDir));
    expect(await serve.exit).toBe(2);
    expect(serve.err()).toContain(`remove ${join(dataDir, "serve.lock")}`);
    expect(ownerOf(dataDir)).toEqual(unnamed);
  });

  it("of this host whose process lives but is not a cursor-bridge (its pid reused) is taken over", async () => {
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    children.push(other);
    const dataDir = lockIn("reused-here", { pid: other.pid, hostname: hostname(), instance: "x", port: 1 });
    const lock = await lockDataDir(dataDir, address);
    expect(ownerOf(dataDir)).toMatchObject({ pid: process.pid, port: 4321 });
    lock.release();
  });

  it("of this host whose process lives under another name but still answers as a cursor-bridge is refused", async () => {
    // A live server whose command line names no cursor-bridge (started through a link of another name): it answers
    // /health at the lock's address as a server does.
    const script = [
      "const s = require('node:http').createServer((q, r) => {",
      "  r.setHeader('content-type', 'application/json');",
      "  r.end(JSON.stringify({ status: 'ok', version: '9.9.9', upstream: 'emulator' }));",
      "});",
      "s.listen(0, '127.0.0.1', () => console.log(s.address().port));",
    ].join("\n");
    const live = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "ignore"] });
    children.push(live);
    const port = await new Promise<number>((resolve, reject) => {
      live.stdout?.once("data", (chunk: Buffer) => resolve(Number(String(chunk).trim())));
      live.once("exit", () => reject(new Error("the stand-in server exited")));
    });
    const lock = { pid: live.pid, hostname: hostname(), instance: "x", host: "127.0.0.1", port };
    const dataDir = lockIn("renamed-here", lock);
    await expect(lockDataDir(dataDir, address)).rejects.toThrow(`pid ${live.pid}, port ${port}`);
    expect(ownerOf(dataDir)).toEqual(lock);
  });

  it("of this host whose process is gone is taken over", async () => {
    const dataDir = lockIn("dead-here", { pid: deadPid(), hostname: hostname(), instance: "gone", port: 8765 });
    const lock = await lockDataDir(dataDir, address);
    expect(ownerOf(dataDir)).toMatchObject({ pid: process.pid, hostname: hostname(), port: 4321 });
    expect(ownerOf(dataDir).instance).not.toBe("gone");
    lock.release();
    expect(existsSync(join(dataDir, "serve.lock"))).toBe(false);
  });

  it("of this host with our pid but another instance (a restarted container) is taken over; ours is refused", async () => {
    const dataDir = lockIn("restarted", { pid: process.pid, hostname: hostname(), instance: "before", port: 8765 });
    const lock = await lockDataDir(dataDir, address);
    expect(ownerOf(dataDir).instance).not.toBe("before");
    // A second serve in this process, on the lock this process now holds, is refused.
    await expect(lockDataDir(dataDir, address)).rejects.toThrow(`pid ${process.pid}, port 4321`);
    lock.release();
  });

  it("is claimed under its guard: a guard another start holds is waited for, a stale one taken over", async () => {
    const dataDir = lockIn("guarded", { pid: deadPid(), hostname: hostname(), instance: "gone", port: 8765 });
    const guard = join(dataDir, "serve.lock.guard");
    // Held by a start in progress: the claim waits for its release, then takes the dead owner's lock.
    writeFileSync(guard, "1");
    const claimed = lockDataDir(dataDir, address);
    let settled = false;
    void claimed.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);
    expect(ownerOf(dataDir).instance).toBe("gone");
    rmSync(guard);
    const lock = await claimed;
    expect(ownerOf(dataDir)).toMatchObject({ pid: process.pid, port: 4321 });
    expect(existsSync(guard)).toBe(false);
    lock.release();
    // Left by a start that died holding it (older than the guard's 10 s): taken over, and removed after the claim.
    writeFileSync(guard, "1");
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(guard, old, old);
    const again = await lockDataDir(dataDir, address);
    expect(ownerOf(dataDir)).toMatchObject({ pid: process.pid, port: 4321 });
    expect(existsSync(guard)).toBe(false);
    again.release();
  });

  it("of a cursor-bridge alive on this host is refused, whether it names this host or (an older version) none", async () => {
    const live = await startServe(join(home, "alive-elsewhere"));
    const pid = live.child.pid;
    const named = lockIn("alive-here", { pid, hostname: hostname(), instance: "x", port: 8765 });
    await expect(lockDataDir(named, address)).rejects.toThrow(`pid ${pid}, port 8765`);
    const unnamed = { pid, port: 8765, startedAt: "2026-01-01T00:00:00.000Z" };
    const older = lockIn("alive-no-host", unnamed);
    await expect(lockDataDir(older, address)).rejects.toThrow(`pid ${pid}, on a machine its lock`);
    // Through the CLI: exit 2 naming it, the lock untouched.
    const serve = run(serveArgs(older));
    expect(await serve.exit).toBe(2);
    expect(serve.err()).toContain(`pid ${pid}, on a machine its lock (an older version's) does not name, port 8765`);
    expect(ownerOf(older)).toEqual(unnamed);
    live.child.kill("SIGTERM");
    expect(await live.exit).toBe(0);
  });
});

describe("a data directory that cannot be used", { timeout: 120_000 }, () => {
  const file = join(home, "a-file");
  writeFileSync(file, "");
  const cases: Array<[string, string, RegExp]> = [
    ["a file on the path", join(file, "data"), /ENOTDIR/],
    // mkdir there answers ENOENT with the parent present: Node's recursive mkdir spun on it forever.
    ["a virtual file system (/proc)", "/proc/cursor-bridge-test", /ENOENT/],
  ];
  if (process.getuid?.() !== 0) {
    const readOnly = join(home, "read-only");
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o500);
    cases.push(["a read-only directory", join(readOnly, "data"), /permission denied/]);
  } else console.warn("skipping the read-only directory case: running as root, which may write anywhere");

  it.each(cases)("serve: %s stops before the banner, exit 2", async (_name, dataDir, cause) => {
    const serve = run(serveArgs(dataDir));
    expect(await serve.exit).toBe(2);
    expect(serve.out()).toBe("");
    expect(serve.err()).toContain(`The data directory ${dataDir} cannot be used`);
    expect(serve.err()).toMatch(cause);
    expect(serve.err()).toContain("--data-dir");
  });

  it.each(cases)("keys create: %s is a usage error, exit 2", async (_name, dataDir, cause) => {
    const keys = run(["keys", "create", "--name", "a", "--data-dir", dataDir, "--json"]);
    expect(await keys.exit).toBe(2);
    const body = JSON.parse(keys.out()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.message).toMatch(cause);
    expect(body.error.message).toContain("--data-dir");
  });
});

describe("a data directory other users could write into", { timeout: 120_000 }, () => {
  it("never follows a link left where the write test goes (it would truncate the link's target)", async () => {
    const dataDir = join(home, "probe-link");
    mkdirSync(dataDir, { mode: 0o700 });
    const target = join(home, "precious.txt");
    writeFileSync(target, "keep me\n");
    // The name the test file had: the pid alone, easy to guess.
    symlinkSync(target, join(dataDir, `.write-test-${process.pid}`));
    prepareDataDir(dataDir);
    expect(readFileSync(target, "utf8")).toBe("keep me\n");
  });

  // Planting a file as another user takes root (this project's test runs are root).
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) console.warn("skipping the planted keys.json case: not root, so no file can be given to another user");
  it.runIf(asRoot)(
    "serve and keys refuse a writable data directory holding another user's keys.json, and never serve its key",
    async () => {
      const dataDir = join(home, "planted");
      mkdirSync(dataDir);
      chmodSync(dataDir, 0o777);
      const planted = join(dataDir, "keys.json");
      const key = "cbk-planted0000000000000000000000000000000000000";
      const hash = createHash("sha256").update(key).digest("hex");
      const record = { id: "vk_0000000000000001", name: "intruder", hash, prefix: key.slice(0, 10) };
      writeFileSync(
        planted,
        JSON.stringify({ version: 1, keys: [{ ...record, createdAt: new Date().toISOString(), limits: {} }] }),
      );
      chownSync(planted, 65534, 65534);

      const serve = run([...serveArgs(dataDir), "--api-key", "the-operators-own-key-0123"]);
      expect(await serve.exit).toBe(2);
      expect(serve.out()).not.toContain("listening on");
      expect(serve.err()).toContain(`holds files that are not yours: ${planted} (uid 65534)`);
      expect(serve.err()).not.toMatch(/\n\s+at /);

      const keys = run(["keys", "list", "--data-dir", dataDir, "--json"]);
      expect(await keys.exit).toBe(2);
      expect(JSON.parse(keys.out()).error.message).toContain(`${planted} (uid 65534)`);
    },
  );
});
