import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import initSqlJs from "sql.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { startBridge } from "../../src/cli/serve.js";
import { closedPort } from "../support/processes.js";
import { type CliHarness, createCliHarness, issueTokens, readStoredCredentials } from "./harness.js";

let harness: CliHarness;
beforeEach(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await harness.close();
});

function writeAuthJson(record: Record<string, string>): string {
  // Linux layout (docs/protocol.md §3.4): $XDG_CONFIG_HOME/cursor/auth.json.
  const path = join(harness.home, ".config", "cursor", "auth.json");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(record));
  return path;
}

async function writeStateDb(rows: [string, string][]): Promise<string> {
  const path = join(harness.home, ".config", "Cursor", "User", "globalStorage", "state.vscdb");
  mkdirSync(dirname(path), { recursive: true });
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
  for (const row of rows) db.run("INSERT INTO ItemTable (key, value) VALUES (?, ?)", row);
  writeFileSync(path, db.export());
  db.close();
  return path;
}

describe("import", () => {
  it("imports the Cursor CLI's auth.json, reports where, and the session works", async () => {
    const pair = issueTokens(harness, { email: "cli@example.com" });
    const path = writeAuthJson(pair);
    const result = await harness.run(["import"]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Cursor CLI auth\.json \*\s+found\s+/);
    expect(result.out).toContain(path);
    expect(result.out).toContain("keys: accessToken, refreshToken");
    expect(result.out).toContain("Imported; logged in as cli@example.com");
    const stored = readStoredCredentials(harness);
    expect(stored.record.source).toBe("import:cli");
    expect(stored.fileMode).toBe(0o600);
    const models = await harness.run(["models", "--json"]);
    expect(models.code).toBe(0);
  });

  it("imports the Cursor IDE's state.vscdb (JSON-quoted values), with --json", async () => {
    const pair = issueTokens(harness, { userId: "user_IDE" });
    const path = await writeStateDb([
      ["cursorAuth/accessToken", JSON.stringify(pair.accessToken)],
      ["cursorAuth/refreshToken", pair.refreshToken],
      ["cursorAuth/cachedEmail", "ide@example.com"],
    ]);
    const result = await harness.run(["import", "--json"]);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.out) as {
      imported: boolean;
      report: { chosen: string; candidates: { origin: string; status: string; location: string; keys: string[] }[] };
      status: { email: string; source: string };
    };
    expect(body.imported).toBe(true);
    expect(body.report.chosen).toBe("ide-state");
    expect(body.report.candidates.find((c) => c.origin === "ide-state")).toMatchObject({
      status: "found",
      location: path,
      keys: expect.arrayContaining(["cursorAuth/accessToken", "cursorAuth/refreshToken"]),
    });
    expect(body.status).toMatchObject({ email: "ide@example.com", source: "import:ide" });
    expect(readStoredCredentials(harness).record.source).toBe("import:ide");
  });

  it("prefers the later-expiring session when both exist", async () => {
    writeAuthJson(issueTokens(harness, { email: "old@example.com", expiresInSeconds: 600 }));
    const fresh = issueTokens(harness, { email: "new@example.com", expiresInSeconds: 7200 });
    await writeStateDb([
      ["cursorAuth/accessToken", fresh.accessToken],
      ["cursorAuth/refreshToken", fresh.refreshToken],
    ]);
    const result = await harness.run(["import"]);
    expect(result.code).toBe(0);
    expect(result.out).toContain("logged in as new@example.com");
  });

  it("exits 3 and says what to do when nothing is found", async () => {
    const result = await harness.run(["import"]);
    expect(result.code).toBe(3);
    expect(result.out).toMatch(/Cursor CLI auth\.json\s+missing/);
    expect(result.err).toContain("No usable Cursor credentials found. Run `cursor-bridge login` instead.");
  });

  it("reports an unreadable auth.json without quoting it", async () => {
    const path = join(harness.home, ".config", "cursor", "auth.json");
    mkdirSync(dirname(path), { recursive: true });
    const secretish = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2ln";
    harness.secrets.add(secretish);
    writeFileSync(path, `{"accessToken": "${secretish}"`);
    const result = await harness.run(["import", "--json"]);
    expect(result.code).toBe(3);
    const body = JSON.parse(result.out) as { report: { candidates: { origin: string; status: string }[] } };
    expect(body.report.candidates[0]).toMatchObject({ origin: "cli-file", status: "unreadable" });
  });

  it("imports an expired session that has a refresh token, says it is renewed on first use, and it is", async () => {
    writeAuthJson(issueTokens(harness, { email: "late@example.com", expiresInSeconds: -60 }));
    const result = await harness.run(["import"]);
    expect(result.code).toBe(0);
    expect(result.out).toContain("Imported; logged in as late@example.com");
    expect(result.out).toContain("The imported session has expired; cursor-bridge renews it");
    expect(result.out).toMatch(/Token\s+expired /);
    const models = await harness.run(["models", "--json"]);
    expect(models.code).toBe(0);
    expect(JSON.parse(models.out)).toMatchObject({ upstream: "cursor" });
  });

  it("refuses an expired session that cannot be renewed and stores nothing", async () => {
    const { accessToken } = issueTokens(harness, { expiresInSeconds: -60 });
    writeAuthJson({ accessToken });
    const result = await harness.run(["import"]);
    expect(result.code).toBe(3);
    expect(result.out).toMatch(/Cursor CLI auth\.json\s+expired/);
    expect(result.out).toContain("the session has expired and has no refresh token or API key to renew it");
    expect(result.err).toContain("No usable Cursor credentials found");
    expect(existsSync(join(harness.configDir, "credentials.json"))).toBe(false);
  });

  it("serve with an expired session: a 503 while Cursor is unreachable, a 401 once Cursor ends the login", async () => {
    const pair = issueTokens(harness, { email: "late@example.com", expiresInSeconds: -60 });
    writeAuthJson(pair);
    expect((await harness.run(["import"])).code).toBe(0);
    const closed = await closedPortUrl();
    let log = "";
    const serve = async (env: Record<string, string>) => {
      const io: CliIo = { out: () => {}, err: (text) => (log += text), isTty: false, env: { ...harness.env, ...env } };
      return (await startBridge(io, ["--port", "0", "--upstream", "cursor", "--log-level", "info"])).bridge;
    };
    const ask = async (url: string) => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hi" }] }),
      });
      return { status: response.status, body: (await response.json()) as { error: { code: string; message: string } } };
    };
    const unreachable = await serve({ CURSOR_API_URL: closed, CURSOR_AGENT_URL: closed });
    try {
      await expect
        .poll(() => log, { timeout: 10_000 })
        .toMatch(/WARN .*The Cursor session of account `default` expired at .*the first request renews it/);
      const answer = await ask(unreachable.server.url);
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe("upstream_unavailable");
      expect(answer.body.error.message).toContain(`could not reach Cursor at ${closed}`);
      expect(answer.body.error.message).toContain("ECONNREFUSED");
      expect(answer.body.error.message).not.toContain("cursor-bridge login");
    } finally {
      await unreachable.close();
    }
    harness.emulator.revokeRefreshToken(pair.refreshToken);
    const refused = await serve({});
    try {
      const answer = await ask(refused.server.url);
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe("cursor_auth_failed");
      // The emulator, like Cursor, ends a revoked browser login with shouldLogout (the model prefetch at start may
      // be what asks first): the login is removed and the client is told to log in again.
      expect(answer.body.error.message).toContain("cursor-bridge login");
    } finally {
      await refused.close();
    }
  });
});

/** A loopback URL nothing listens on. */
async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}
