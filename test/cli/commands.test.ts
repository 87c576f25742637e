import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator/index.js";
import { createModelCatalogue } from "../../src/emulator/models.js";
import {
  type CliHarness,
  createCliHarness,
  issueTokens,
  readStoredCredentials,
  writeStoredCredentials,
} from "./harness.js";

let harness: CliHarness;
beforeEach(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await harness.close();
});

function logIn(options: { email?: string; expiresInSeconds?: number } = { email: "ada@example.com" }): void {
  writeStoredCredentials(harness, {
    ...issueTokens(harness, options),
    ...(options.email ? { email: options.email } : {}),
  });
}

describe("status", () => {
  it("shows who, expiry, source, upstream reachability and client version", async () => {
    logIn();
    const result = await harness.run(["status"], { env: { CURSOR_CLIENT_VERSION: "cli-2026.02.13-41ac335" } });
    expect(result.code).toBe(0);
    expect(result.out).toContain("Logged in as ada@example.com");
    expect(result.out).toMatch(/Credentials\s+browser login, .*credentials\.json/);
    expect(result.out).toMatch(/Token\s+valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in (59|60) min\)/);
    expect(result.out).toContain(`${harness.emulator.url} — reachable over HTTP/2`);
    expect(result.out).toMatch(/Client version\s+cli-2026\.02\.13-41ac335 \(env\)/);
    expect(result.out).not.toContain("\u001b[");
  });

  it("--json describes the same without tokens", async () => {
    logIn();
    const result = await harness.run(["status", "--json"]);
    const body = JSON.parse(result.out) as Record<string, unknown>;
    expect(body).toMatchObject({
      loggedIn: true,
      credentials: { origin: "store", source: "login", email: "ada@example.com", expired: false, hasApiKey: false },
      upstream: { url: harness.emulator.url, reachable: true, protocol: "http2" },
      clientVersion: { source: "default" },
    });
    // Only the data, not the object behind it (its options and logger).
    expect(body.clientVersion).toEqual({ version: expect.stringMatching(/^cli-/), source: "default" });
  });

  it("exits 3 when not logged in and 4 when the upstream is unreachable", async () => {
    expect((await harness.run(["status"])).code).toBe(3);
    logIn();
    const closed = await unusedPortUrl();
    const result = await harness.run(["status", "--json"], { env: { CURSOR_API_URL: closed } });
    expect(result.code).toBe(4);
    expect(JSON.parse(result.out)).toMatchObject({ upstream: { reachable: false, error: "ECONNREFUSED" } });
  });

  it("uses colour only on a terminal", async () => {
    logIn();
    const result = await harness.run(["status"], { isTty: true });
    expect(result.out).toContain("\u001b[1m");
  });

  it("uses no colour on a terminal when NO_COLOR is set", async () => {
    logIn();
    const result = await harness.run(["status"], { isTty: true, env: { NO_COLOR: "1" } });
    expect(result.code).toBe(0);
    expect(result.out).not.toContain("\u001b[");
  });
});

describe("models", () => {
  it("prints an aligned table of id, name, reasoning, context window and aliases", async () => {
    logIn();
    const result = await harness.run(["models"]);
    expect(result.code).toBe(0);
    const lines = result.out.split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+REASONING\s+CONTEXT\s+ALIASES$/);
    const auto = lines.find((line) => line.startsWith("default "));
    expect(auto).toMatch(/^default\s+Auto\s+no\s+200k\s+auto$/);
    expect(result.out).toMatch(/\ngemini-3-pro\s+Gemini 3 Pro\s+yes\s+1M/);
    // Aligned: every column starts at the same offset as its header.
    const nameColumn = lines[0]?.indexOf("NAME");
    for (const line of lines.slice(2).filter((l) => l.includes("  ") && !l.includes("models."))) {
      expect(line.slice(nameColumn).startsWith(" ")).toBe(false);
    }
  });

  it("--json lists the models", async () => {
    logIn();
    const result = await harness.run(["models", "--json"]);
    const body = JSON.parse(result.out) as { models: { id: string; contextWindow: number; reasoning: boolean }[] };
    expect(body.models.find((m) => m.id === "gpt-5.2")).toMatchObject({ contextWindow: 272_000, reasoning: true });
  });

  it("with --upstream cursor and no login, exits 3 with a login hint", async () => {
    const result = await harness.run(["models", "--upstream", "cursor"]);
    expect(result.code).toBe(3);
    expect(result.err).toContain("Run `cursor-bridge login` first");
  });

  it("refreshes an expired session first and persists the rotated tokens", async () => {
    logIn({ email: "old@example.com", expiresInSeconds: -60 });
    const before = readStoredCredentials(harness).record;
    const result = await harness.run(["models", "--json"]);
    expect(result.code).toBe(0);
    const after = readStoredCredentials(harness);
    expect(after.record.accessToken).not.toBe(before.accessToken);
    expect(after.fileMode).toBe(0o600);
    harness.expectNoSecrets(result.out + result.err);
  });

  it("refreshes once and retries when Cursor rejects an unexpired token", async () => {
    const other = await startEmulator({ port: 0 });
    try {
      const foreign = other.issueTokens({ email: "ada@example.com" });
      harness.secrets.add(foreign.accessToken);
      const own = issueTokens(harness, { email: "ada@example.com" });
      writeStoredCredentials(harness, { accessToken: foreign.accessToken, refreshToken: own.refreshToken });
      const result = await harness.run(["models", "--json"]);
      expect(result.code).toBe(0);
      expect(readStoredCredentials(harness).record.accessToken).not.toBe(foreign.accessToken);
    } finally {
      await other.close();
    }
  });

  it("tells the user to log in again when the refresh is rejected too", async () => {
    const other = await startEmulator({ port: 0 });
    try {
      writeStoredCredentials(harness, issueTokensFrom(other));
      const result = await harness.run(["models"]);
      expect(result.code).toBe(3);
      expect(result.err).toContain("cursor-bridge login");
    } finally {
      await other.close();
    }
  });
});

function issueTokensFrom(other: Awaited<ReturnType<typeof startEmulator>>) {
  const pair = other.issueTokens();
  harness.secrets.add(pair.accessToken);
  harness.secrets.add(pair.refreshToken);
  return pair;
}

describe("credentials from the environment", () => {
  it("CURSOR_ACCESS_TOKEN is used as-is and shown as such", async () => {
    const { accessToken } = issueTokens(harness, { email: "env@example.com" });
    const status = await harness.run(["status", "--json"], { env: { CURSOR_ACCESS_TOKEN: accessToken } });
    expect(JSON.parse(status.out)).toMatchObject({
      loggedIn: true,
      credentials: { origin: "env-access-token", source: "env", email: "env@example.com" },
    });
    const models = await harness.run(["models"], { env: { CURSOR_ACCESS_TOKEN: accessToken } });
    expect(models.code).toBe(0);
  });

  it("CURSOR_API_KEY without a login is exchanged in memory only", async () => {
    const key = "key_env_0123456789abcdefghij";
    harness.secrets.add(key);
    harness.emulator.addApiKey(key);
    const result = await harness.run(["usage", "--json"], { env: { CURSOR_API_KEY: key } });
    expect(result.code).toBe(0);
    const status = await harness.run(["status"], { env: { CURSOR_API_KEY: key } });
    expect(status.out).toContain("environment (CURSOR_API_KEY, exchanged on first use)");
    const logout = await harness.run(["logout"], { env: { CURSOR_API_KEY: key } });
    expect(logout.out).toContain("CURSOR_API_KEY still set in the environment");
  });
});

describe("usage", () => {
  it("shows plan usage with a bar and the billing cycle", async () => {
    logIn();
    const result = await harness.run(["usage"]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^Billing cycle: \d{4}-\d\d-01 00:00 UTC → \d{4}-\d\d-01 00:00 UTC$/m);
    expect(result.out).toMatch(/^Plan usage: \[-{30}\] 0\.0%$/m);
    expect(result.out).toMatch(/Used\s+\$0\.00 of \$20\.00/);
  });

  it("--json gives the numbers and ISO cycle bounds", async () => {
    logIn();
    const result = await harness.run(["usage", "--json"]);
    expect(JSON.parse(result.out)).toMatchObject({
      billingCycle: { start: expect.stringMatching(/-01T00:00:00\.000Z$/), end: expect.any(String) },
      planUsage: { limit: 2000, remaining: 2000, usedFraction: 0 },
      unit: "cents",
    });
  });
});

describe("logout", () => {
  it("removes the credential file, then reports nothing to remove", async () => {
    logIn();
    const first = await harness.run(["logout"]);
    expect(first.out).toContain("Logged out: removed");
    const second = await harness.run(["logout", "--json"]);
    expect(JSON.parse(second.out)).toMatchObject({ removed: false, environmentCredentials: [] });
    expect((await harness.run(["status"])).code).toBe(3);
  });
});

describe("doctor", () => {
  it("passes every check against the emulator when logged in", async () => {
    logIn();
    const result = await harness.run(["doctor"]);
    expect(result.code).toBe(0);
    for (const title of ["Node.js", "Credentials", "Token", "Upstream HTTP/2", "Upstream HTTP/1.1", "Data directory"]) {
      expect(result.out).toMatch(new RegExp(`\\[ ok \\] ${title.replace(/[./]/g, "\\$&")}`));
    }
    // As many models as the emulator's GetUsableModels lists (src/emulator/models.ts).
    expect(result.out).toContain(`accepted by Cursor (${createModelCatalogue().usable().length} models)`);
    expect(result.out).toContain("All checks passed.");
  });

  it("names the client version in use, where it came from and Cursor's minimum; a learned one from the data dir", async () => {
    logIn();
    const dataDir = join(harness.home, ".local", "share", "cursor-bridge");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "client-version.json"), JSON.stringify({ version: "cli-2030.01.02-e1e1e1e" }));
    const result = await harness.run(["doctor"]);
    expect(result.out).toMatch(
      /Client version\s+cli-2030\.01\.02-e1e1e1e \(learned from Cursor\); Cursor's minimum cli-2025\.11\.25-d5b3271/,
    );
  });

  it("--json fails with fixes when the port is taken; logged out is information (serve runs the emulator)", async () => {
    const server = await occupyPort();
    try {
      const port = (server.address() as { port: number }).port;
      const result = await harness.run(["doctor", "--json", "--port", String(port)]);
      expect(result.code).toBe(1);
      const body = JSON.parse(result.out) as { ok: boolean; checks: { id: string; status: string; fix?: string }[] };
      expect(body.ok).toBe(false);
      const byId = new Map(body.checks.map((check) => [check.id, check]));
      expect(byId.get("credentials")).toMatchObject({ status: "info", fix: expect.stringContaining("login") });
      expect(byId.get("token")).toMatchObject({ status: "skip" });
      expect(byId.get("port")).toMatchObject({ status: "fail", fix: expect.stringContaining("--port") });
      expect(byId.get("upstream-http2")).toMatchObject({ status: "ok" });
    } finally {
      server.close();
    }
  });

  it("flags a credential file that was readable by others (the store tightens it)", async () => {
    logIn();
    chmodSync(`${harness.configDir}/credentials.json`, 0o644);
    const result = await harness.run(["doctor", "--json"]);
    const body = JSON.parse(result.out) as { checks: { id: string; status: string; fix?: string }[] };
    expect(body.checks.find((c) => c.id === "credentials")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("was mode 644, readable by others"),
    });
    expect(statSync(`${harness.configDir}/credentials.json`).mode & 0o777).toBe(0o600);
  });
});

async function occupyPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

async function unusedPortUrl(): Promise<string> {
  const server = await occupyPort();
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
