import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import initSqlJs from "sql.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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
});
