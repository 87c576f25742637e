/**
 * What a shared Redis store that cannot be used says, against real redis-servers: a configuration error (wrong or
 * missing password, rediss:// to a plain server, an unknown host, a database index the server does not have, a URL
 * that is not one, redis:// to a TLS server, an untrusted certificate, a Redis Cluster node) names its real cause and
 * what to fix, exit 2, in `keys`, `serve` and `doctor`; an outage says its real cause and "Retry shortly", exit 4.
 * During an outage the log says it once when lost (a reminder at most once a minute), once when back with how long it
 * was down, and `/health` is a 503 naming the store until it returns.
 */
import { execFileSync } from "node:child_process";
import { lookup } from "node:dns/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { connectStore } from "../../src/stores/redis/client.js";
import { ProxyError } from "../../src/util/errors.js";
import type { Logger } from "../../src/util/logger.js";
import { type CliHarness, createCliHarness } from "../cli/harness.js";
import { freePort, missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");
const SECRET = "a-cluster-secret-of-some-length";

describe.skipIf(skip !== undefined)("shared store faults", { timeout: 120_000 }, () => {
  let plain: RedisServer;
  let guarded: RedisServer;
  let harness: CliHarness;
  beforeAll(async () => {
    plain = await startRedisServer();
    guarded = await startRedisServer(["--requirepass", "right-password"]);
    harness = await createCliHarness();
  });
  afterAll(async () => {
    await harness?.close();
    await plain?.close();
    await guarded?.close();
  });

  const keysList = (store: string) => harness.run(["keys", "list", "--store", store, "--json"]);

  const configCases = (): Array<[string, string, RegExp]> => [
    ["a wrong password", `redis://:wrong@127.0.0.1:${guarded.port}/0`, /WRONGPASS.*correct them in the URL/],
    ["no password where one is needed", `redis://127.0.0.1:${guarded.port}/0`, /NOAUTH.*redis:\/\/:PASSWORD@/],
    ["rediss:// to a plain server", `rediss://127.0.0.1:${plain.port}/0`, /TLS handshake.*plain Redis.*redis:\/\//],
    ["a database index the server does not have", `redis://127.0.0.1:${plain.port}/99`, /no database 99.*out of range/],
    ["a database that is not a number", `redis://127.0.0.1:${plain.port}/abc`, /not a valid Redis URL/],
  ];

  it("keys: each configuration error names its cause and the fix, exit 2, never 'Retry shortly'", async () => {
    for (const [name, url, cause] of configCases()) {
      const result = await keysList(url);
      expect(result.code, `${name}: ${result.err}`).toBe(2);
      expect(result.err, name).toMatch(cause);
      expect(result.err, name).not.toMatch(/Retry shortly|Connection is closed/);
      expect(result.err, name).not.toContain("right-password");
      const body = JSON.parse(result.out) as { error: { code: string } };
      expect(body.error.code, name).toBe("invalid_request");
    }
    // The right password and a database the server has work.
    const ok = await keysList(`redis://:right-password@127.0.0.1:${guarded.port}/3`);
    expect(ok.code, ok.err).toBe(0);
  });

  it("keys: redis:// to a TLS server, and rediss:// to one whose certificate is not trusted", async () => {
    const noOpenssl = missingBinaries("openssl");
    if (noOpenssl !== undefined) return;
    const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-tls-"));
    let tls: RedisServer | undefined;
    try {
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
        ]),
        { stdio: "ignore" },
      );
      const tlsPort = await freePort();
      const tlsArgs = ["--tls-port", String(tlsPort), "--tls-cert-file", join(dir, "cert.pem")];
      tlsArgs.push("--tls-key-file", join(dir, "key.pem"), "--tls-ca-cert-file", join(dir, "cert.pem"));
      tlsArgs.push("--tls-auth-clients", "no");
      try {
        tls = await startRedisServer(tlsArgs);
      } catch (error) {
        if (process.env.CI === "true") throw error;
        console.warn(`skipping: this redis-server does not start with TLS (${String(error)})`);
        return;
      }
      const plainToTls = await keysList(`redis://127.0.0.1:${tlsPort}/0`);
      expect(plainToTls.code, plainToTls.err).toBe(2);
      expect(plainToTls.err).toMatch(/speaks TLS: use rediss:\/\//);
      const untrusted = await keysList(`rediss://127.0.0.1:${tlsPort}/0`);
      expect(untrusted.code, untrusted.err).toBe(2);
      expect(untrusted.err).toMatch(/TLS certificate that was not accepted \(.*self-signed.*NODE_EXTRA_CA_CERTS/);
      for (const result of [plainToTls, untrusted]) expect(result.err).not.toMatch(/Retry shortly/);
    } finally {
      await tls?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keys: a host that does not resolve is a configuration error", async () => {
    const host = "no-such-host.invalid";
    const resolved = await lookup(host).then(
      () => "resolved",
      (error: NodeJS.ErrnoException) => error.code ?? "error",
    );
    if (resolved !== "ENOTFOUND") {
      console.warn(`skipping: this machine's resolver answers ${resolved} for ${host}, not ENOTFOUND`);
      return;
    }
    const result = await keysList(`redis://${host}:6379/0`);
    expect(result.code, result.err).toBe(2);
    expect(result.err).toMatch(/ENOTFOUND.*correct the host/);
  });

  it("keys: a server that is down is an outage with its real cause, exit 4", async () => {
    const result = await keysList(`redis://127.0.0.1:${await freePort()}/0`);
    expect(result.code, result.err).toBe(4);
    expect(result.err).toMatch(/is unavailable \(connect ECONNREFUSED [^)]*\)\. Retry shortly\./);
  });

  it("serve and doctor refuse a database index the server does not have", async () => {
    const url = `redis://127.0.0.1:${plain.port}/99`;
    const env = { CURSOR_BRIDGE_CLUSTER_SECRET: SECRET };
    const serve = await harness.run(["serve", "--port", "0", "--upstream", "emulator", "--store", url], { env });
    expect(serve.code, serve.err).toBe(2);
    expect(serve.out).not.toContain("listening on");
    expect(serve.err).toMatch(/no database 99/);
    const doctor = JSON.parse((await harness.run(["doctor", "--json", "--store", url], { env })).out) as {
      checks: Array<{ id: string; status: string; detail: string; fix?: string }>;
    };
    expect(doctor.checks.find((check) => check.id === "store")).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/no database 99/),
      fix: expect.stringMatching(/Correct --store/),
    });
  });

  it("a Redis Cluster node is refused: keys, audit, serve and doctor say the store must be one server, exit 2", async () => {
    const cluster = await startRedisServer([], { cluster: true });
    try {
      const refused = new RegExp(
        "is a Redis Cluster node: the store must be one Redis server \\(a primary, replicas allowed; " +
          "Redis Cluster is not supported\\), because .*hash slots",
      );
      const direct = await connectStore({ url: cluster.url }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(direct).toBeInstanceOf(ProxyError);
      expect(direct).toMatchObject({
        code: "invalid_request",
        detail: "invalid_config",
        message: expect.stringMatching(refused),
      });
      // Database 1 too: the cluster is said, not the SELECT a cluster node refuses.
      for (const url of [cluster.url, `redis://127.0.0.1:${cluster.port}/1`]) {
        for (const argv of [["keys", "list"], ["audit"]]) {
          const result = await harness.run([...argv, "--store", url, "--json"]);
          expect(result.code, `${argv.join(" ")} ${url}: ${result.err}`).toBe(2);
          expect(result.err).toMatch(refused);
          expect(result.err).not.toMatch(/Retry shortly|CROSSSLOT|MOVED|SELECT|\n\s+at /);
        }
      }
      const env = { CURSOR_BRIDGE_CLUSTER_SECRET: SECRET };
      const serve = await harness.run(["serve", "--port", "0", "--upstream", "emulator", "--store", cluster.url], {
        env,
      });
      expect(serve.code, serve.err).toBe(2);
      expect(serve.out).not.toContain("listening on");
      expect(serve.err).toMatch(refused);
      expect(serve.err).not.toMatch(/\n\s+at /);
      const doctor = JSON.parse((await harness.run(["doctor", "--json", "--store", cluster.url], { env })).out) as {
        checks: Array<{ id: string; status: string; detail: string; fix?: string }>;
      };
      expect(doctor.checks.find((check) => check.id === "store")).toMatchObject({
        status: "fail",
        detail: expect.stringMatching(refused),
        fix: expect.stringMatching(/Correct --store/),
      });
    } finally {
      await cluster.close();
    }
  });

  it("one Redis server is accepted, also one that refuses INFO (as some managed Redis do)", async () => {
    const client = await connectStore({ url: plain.url });
    try {
      expect(await client.redis.info("cluster")).toMatch(/^cluster_enabled:0\r?$/m);
    } finally {
      await client.close();
    }
    // INFO denied to the default user: only a server that says it is a cluster node is refused.
    const restricted = await startRedisServer(["--user", "default", "on", "nopass", "~*", "&*", "+@all", "-info"]);
    try {
      const limited = await connectStore({ url: restricted.url });
      try {
        await expect(limited.redis.info("cluster")).rejects.toThrow(/NOPERM/);
        expect(await limited.redis.set("probe", "ok")).toBe("OK");
      } finally {
        await limited.close();
      }
      const result = await keysList(restricted.url);
      expect(result.code, result.err).toBe(0);
    } finally {
      await restricted.close();
    }
  });

  it("an outage is logged once when lost, at most once a minute meanwhile, once when back", async () => {
    const server = await startRedisServer();
    const lines: Array<{ level: string; message: string; fields: Record<string, unknown> | undefined }> = [];
    const logger: Logger = {
      debug: (message, fields) => lines.push({ level: "debug", message, fields }),
      info: (message, fields) => lines.push({ level: "info", message, fields }),
      warn: (message, fields) => lines.push({ level: "warn", message, fields }),
      error: (message, fields) => lines.push({ level: "error", message, fields }),
      child: () => logger,
    };
    let clock = 1_000_000;
    const client = await connectStore({ url: server.url, logger, timeoutMs: 500, now: () => clock });
    const count = (level: string, pattern: RegExp) =>
      lines.filter((line) => line.level === level && pattern.test(line.message)).length;
    try {
      await server.stop();
      // Several reconnect attempts fail (each one is a debug line): the warning is still said once.
      await expect.poll(() => count("debug", /store connection error/), { timeout: 60_000 }).toBeGreaterThan(3);
      expect(count("warn", /lost the connection to the shared store/)).toBe(1);
      expect(count("warn", /still unreachable/)).toBe(0);
      // A minute later (the injected clock), the next failed attempt reminds once.
      clock += 61_000;
      await expect.poll(() => count("warn", /still unreachable/), { timeout: 60_000 }).toBe(1);
      const errorsBefore = count("debug", /store connection error/);
      await expect
        .poll(() => count("debug", /store connection error/), { timeout: 60_000 })
        .toBeGreaterThan(errorsBefore + 1);
      expect(count("warn", /still unreachable/)).toBe(1);
      expect(client.health()).toMatch(new RegExp(`127\\.0\\.0\\.1:${server.port}.*unreachable`));
      clock += 4_000;
      await server.start();
      await expect.poll(() => count("info", /reachable again/), { timeout: 60_000 }).toBe(1);
      const back = lines.find((line) => /reachable again/.test(line.message));
      expect(back?.fields?.down_s).toBe(65);
      expect(client.health()).toBeUndefined();
      expect(count("warn", /lost the connection/)).toBe(1);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("/health is a 503 naming the store while it is down, 200 again once it is back", async () => {
    const server = await startRedisServer();
    let bridge: RunningBridge | undefined;
    try {
      const io: CliIo = {
        out: () => {},
        err: () => {},
        isTty: false,
        env: { ...harness.env, CURSOR_BRIDGE_CLUSTER_SECRET: SECRET },
      };
      bridge = (
        await startBridge(io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent", "--store", server.url])
      ).bridge;
      const health = async () => {
        const response = await fetch(`${bridge?.server.url}/health`);
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      expect(await health()).toMatchObject({ status: 200, body: { status: "ok" } });
      await server.stop("keep");
      await expect.poll(async () => (await health()).status, { timeout: 60_000 }).toBe(503);
      const down = await health();
      expect(down.body).toMatchObject({
        status: "unavailable",
        reason: expect.stringContaining(`redis://127.0.0.1:${server.port}/0 is unreachable`),
        upstream: "emulator",
      });
      expect(typeof down.body.version).toBe("string");
      await server.start();
      await expect.poll(async () => (await health()).status, { timeout: 60_000 }).toBe(200);
      expect((await health()).body).not.toHaveProperty("reason");
    } finally {
      await bridge?.close();
      await server.close();
    }
  });
});
