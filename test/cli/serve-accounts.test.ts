/**
 * `cursor-bridge serve` with named Cursor accounts (issue #29), through the real CLI entry against the emulator
 * posing as Cursor: every account's login is loaded and served beside the default one, the banner and the status
 * page name them, and logins for named accounts without one for the default account are refused at start (requests
 * that name no account would otherwise have nothing to run on but someone else's account).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";
import { type CliHarness, captureIo, createCliHarness } from "./harness.js";

const open: Array<{ bridge?: RunningBridge; harness?: CliHarness }> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) {
    await item.bridge?.close();
    await item.harness?.close();
  }
});

async function loginWithKey(
  harness: CliHarness,
  key: string,
  who: { email: string; userId: string },
  account?: string,
) {
  harness.emulator.addApiKey(key, who);
  const argv = ["login", "--api-key", ...(account === undefined ? [] : ["--account", account])];
  const result = await harness.run(argv, { env: { CURSOR_API_KEY: key } });
  expect(result.code, result.err).toBe(0);
}

describe("serve with named accounts", () => {
  it("loads every account's login and shows each one's plan usage on the status page", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await loginWithKey(harness, "cur_main_key_123456", { email: "main@example.com", userId: "user_main" });
    await loginWithKey(harness, "cur_alice_key_123456", { email: "alice@example.com", userId: "user_alice" }, "alice");
    const { io, out } = captureIo(harness.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    expect(out.join("")).toMatch(/as main@example\.com/);
    expect(out.join("")).toContain("Named accounts also served: alice");
    expect(bridge.upstream.named.map((named) => named.name)).toEqual(["alice"]);

    harness.emulator.limitUsage("user_alice");
    const snapshot = (await (await fetch(`${bridge.server.url}/status.json`)).json()) as {
      accounts: { name: string; default: boolean; who: string; usage: { usedFraction: number } }[];
    };
    expect(snapshot.accounts.map((a) => [a.name, a.default, a.who, a.usage.usedFraction === 1])).toEqual([
      ["default", true, "main@example.com", false],
      ["alice", false, "alice@example.com", true],
    ]);
    // Requests that name no account run on the default account, which is not at its limit.
    const response = await fetch(`${bridge.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "ping" }] }),
    });
    expect(response.status).toBe(200);
  });

  it("refuses to start when named accounts have logins but the default account has none", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await loginWithKey(harness, "cur_alice_key_123456", { email: "alice@example.com", userId: "user_alice" }, "alice");
    const { io } = captureIo(harness.env);
    await expect(startBridge(io, ["--port", "0", "--log-level", "silent"])).rejects.toThrow(
      /The default account `default` has no Cursor login, but alice has one/,
    );
    // Choosing alice as the default serves her login.
    expect((await harness.run(["accounts", "default", "alice"])).code).toBe(0);
    const { bridge } = await startBridge(captureIo(harness.env).io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    expect(bridge.upstream.kind).toBe("cursor");
    expect(bridge.upstream.defaultAccount).toBe("alice");
  });
});

const missingRedis = missingBinaries("redis-server", "redis-cli");
if (missingRedis !== undefined && process.env.CI === "true") throw new Error(`CI needs ${missingRedis}`);
if (missingRedis !== undefined) console.warn(`serve-accounts: the shared-store case is skipped: ${missingRedis}`);

describe.skipIf(missingRedis !== undefined)("serve with named accounts on a shared Redis store", () => {
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await redis?.close();
    redis = undefined;
  });

  it("shares each account's login with an instance that has none of them, encrypted and per account", async () => {
    redis = await startRedisServer();
    const harness = await createCliHarness();
    open.push({ harness });
    await loginWithKey(harness, "cur_main_key_123456", { email: "main@example.com", userId: "user_main" });
    await loginWithKey(harness, "cur_alice_key_123456", { email: "alice@example.com", userId: "user_alice" }, "alice");
    const shared = {
      CURSOR_BRIDGE_STORE: redis.url,
      CURSOR_BRIDGE_CLUSTER_SECRET: "a-cluster-secret-of-some-length",
    };
    const first = await startBridge(captureIo({ ...harness.env, ...shared }).io, [
      "--port",
      "0",
      "--log-level",
      "silent",
    ]);
    open.push({ bridge: first.bridge });
    // A second instance with a config directory of its own, holding no login at all.
    const home = mkdtempSync(join(tmpdir(), "cursor-bridge-second-"));
    const env = { ...harness.env, ...shared, HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
    const second = await startBridge(captureIo(env).io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge: second.bridge });
    try {
      expect(second.bridge.upstream.kind).toBe("cursor");
      expect(second.bridge.upstream.named.map((named) => [named.name, named.who])).toEqual([
        ["alice", "alice@example.com"],
      ]);
      const keys = await redisKeys(redis.url);
      expect(keys.some((key) => key.endsWith("credentials:alice"))).toBe(true);
      const response = await fetch(`${second.bridge.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "ping" }] }),
      });
      expect(response.status).toBe(200);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

async function redisKeys(url: string): Promise<string[]> {
  const client = new Redis(url);
  try {
    return await client.keys("*");
  } finally {
    client.disconnect();
  }
}

describe("serve with virtual keys bound to named accounts", () => {
  it("runs each key's turns on its account: one at its usage limit, the other serving, a logged-out one refused", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await loginWithKey(harness, "cur_main_key_123456", { email: "main@example.com", userId: "user_main" });
    await loginWithKey(harness, "cur_alice_key_123456", { email: "alice@example.com", userId: "user_alice" }, "alice");
    await loginWithKey(harness, "cur_bob_key_1234567", { email: "bob@example.com", userId: "user_bob" }, "bob");
    const create = async (name: string, account?: string) => {
      const argv = ["keys", "create", "--name", name, ...(account === undefined ? [] : ["--account", account])];
      const result = await harness.run([...argv, "--json"]);
      expect(result.code, result.err).toBe(0);
      const key = (JSON.parse(result.out) as { key: string }).key;
      harness.secrets.add(key);
      return key;
    };
    const aliceKey = await create("alice-laptop", "alice");
    const bobKey = await create("bob-laptop", "bob");
    const teamKey = await create("shared");
    // bob leaves before the server starts: his key stays, his login does not.
    expect((await harness.run(["logout", "--account", "bob"])).code).toBe(0);
    const { bridge } = await startBridge(captureIo(harness.env).io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    const chat = (key: string) =>
      fetch(`${bridge.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hello" }] }),
      });
    harness.emulator.limitUsage("user_alice");
    const limited = await chat(aliceKey);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("insufficient_quota");
    expect((await chat(teamKey)).status).toBe(200);
    const refused = await chat(bobKey);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("`bob`");
    harness.emulator.limitUsage("user_alice", false);
    expect((await chat(aliceKey)).status).toBe(200);
  });

  it("a key whose account is logged out while serving gets a 403 naming no server file; a new login serves again", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    await loginWithKey(harness, "cur_main_key_123456", { email: "main@example.com", userId: "user_main" });
    await loginWithKey(harness, "cur_carol_key_123456", { email: "carol@example.com", userId: "user_carol" }, "carol");
    const created = await harness.run(["keys", "create", "--name", "carol-laptop", "--account", "carol", "--json"]);
    expect(created.code, created.err).toBe(0);
    const carolKey = (JSON.parse(created.out) as { key: string }).key;
    harness.secrets.add(carolKey);
    const { io, err } = captureIo(harness.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "info"]);
    open.push({ bridge });
    const chat = () =>
      fetch(`${bridge.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${carolKey}` },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hello" }] }),
      });
    expect((await chat()).status).toBe(200);
    expect((await harness.run(["logout", "--account", "carol"])).code).toBe(0);
    const refused = await chat();
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { message: string; type: string } };
    expect(body.error.message).toContain("The Cursor account `carol` was logged out on this cursor-bridge");
    expect(body.error.message).not.toContain(harness.home);
    expect(body.error.message).not.toContain("credentials");
    // Cursor was never asked, so the log does not claim it rejected the token.
    expect(err.join("")).not.toContain("Cursor rejected the access token");
    expect(err.join("")).toContain("The Cursor account `carol` was logged out: its requests get 403");
    await loginWithKey(harness, "cur_carol_key_123456", { email: "carol@example.com", userId: "user_carol" }, "carol");
    expect((await chat()).status).toBe(200);
    expect(err.join("")).toContain("The Cursor account `carol` is logged in again");
  });
});

describe("serve with named accounts and Cursor's HTTP/2 hint", () => {
  it("each account's client follows GetServerConfig's http2_config as read with its own login", async () => {
    // The emulator answers GetServerConfig with FORCE_ALL_DISABLED (docs/emulator.md, `--http2-config`): with
    // `--transport auto`, every call of a client that read it goes over HTTP/1.1, its Runs as RunSSE + BidiAppend.
    const harness = await createCliHarness({ http2Config: "force-all-disabled" });
    open.push({ harness });
    await loginWithKey(harness, "cur_main_key_123456", { email: "main@example.com", userId: "user_main" });
    await loginWithKey(harness, "cur_alice_key_123456", { email: "alice@example.com", userId: "user_alice" }, "alice");
    const create = async (name: string, account?: string) => {
      const argv = ["keys", "create", "--name", name, ...(account === undefined ? [] : ["--account", account])];
      const result = await harness.run([...argv, "--json"]);
      expect(result.code, result.err).toBe(0);
      const key = (JSON.parse(result.out) as { key: string }).key;
      harness.secrets.add(key);
      return key;
    };
    const aliceKey = await create("alice-laptop", "alice");
    const teamKey = await create("shared");
    const { bridge } = await startBridge(captureIo(harness.env).io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    /** One turn with `key` (on its account); the transport its Run reached the emulator over. */
    const turnWith = async (key: string): Promise<string | undefined> => {
      const response = await fetch(`${bridge.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hello" }] }),
      });
      expect(response.status).toBe(200);
      await response.text();
      return harness.emulator.stats().turns.at(-1)?.transport;
    };
    expect(await turnWith(aliceKey)).toBe("http2");
    expect(await turnWith(teamKey)).toBe("http2");
    // What serve's timer does 10 s after the start (and once a day), now.
    await bridge.readServerConfig();
    expect(await turnWith(aliceKey)).toBe("http1");
    expect(await turnWith(teamKey)).toBe("http1");
  });
});
