import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import initSqlJs from "sql.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cursorCliAuthFile, cursorIdeStateDb, type PathEnvironment } from "../util/paths.js";
import { findExistingCredentials } from "./import.js";
import type { CommandRunner } from "./import-sources.js";

const NOW = 1_800_000_000_000;
const now = () => NOW;

function makeJwt(payload: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}.c2ln`;
}
const jwt = (minutes: number, user: string) => makeJwt({ exp: (NOW + minutes * 60_000) / 1000, sub: `auth0|${user}` });

const CLI_ACCESS = jwt(30, "user_cli");
const CLI_REFRESH = "cli-refresh-secret";
const IDE_ACCESS = jwt(600, "user_ide");
const IDE_REFRESH = "ide-refresh-secret";
const KEYCHAIN_ACCESS = jwt(120, "user_mac");

async function writeStateDb(path: string, rows: [string, string | Uint8Array][]): Promise<void> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)");
  for (const row of [["workbench.theme", "dark"] as [string, string], ...rows]) {
    db.run("INSERT INTO ItemTable (key, value) VALUES (?, ?)", row);
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, db.export());
  db.close();
}

function expectNoTokens(value: unknown): void {
  const text = JSON.stringify(value);
  for (const token of [CLI_ACCESS, CLI_REFRESH, IDE_ACCESS, IDE_REFRESH, KEYCHAIN_ACCESS, "mac-refresh-secret"]) {
    expect(text).not.toContain(token);
  }
}

describe("findExistingCredentials", () => {
  let home: string;
  let paths: PathEnvironment;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), "cb-import-"));
    paths = { env: {}, platform: "linux", homedir: home };
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("reports every location as missing in an empty home", async () => {
    const { report, credentials } = await findExistingCredentials({ paths, now });
    expect(credentials).toBeUndefined();
    expect(report.chosen).toBeUndefined();
    expect(report.candidates.map((c) => [c.origin, c.status])).toEqual([
      ["cli-file", "missing"],
      ["cli-keychain", "skipped"],
      ["ide-state", "missing"],
    ]);
  });

  it("imports the Cursor CLI auth.json", async () => {
    const path = cursorCliAuthFile(paths);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify({ accessToken: CLI_ACCESS, refreshToken: CLI_REFRESH }));
    const { report, credentials } = await findExistingCredentials({ paths, now });
    expect(credentials).toEqual({
      accessToken: CLI_ACCESS,
      refreshToken: CLI_REFRESH,
      source: "import:cli",
      userId: "user_cli",
    });
    expect(report.chosen).toBe("cli-file");
    expect(report.candidates[0]).toEqual({
      origin: "cli-file",
      location: path,
      status: "found",
      keys: ["accessToken", "refreshToken"],
      userId: "user_cli",
      expiresAt: new Date(NOW + 30 * 60_000).toISOString(),
      expired: false,
    });
    expectNoTokens(report);
  });

  it("reads a real SQLite state.vscdb and prefers the later expiry", async () => {
    const cliPath = cursorCliAuthFile(paths);
    await mkdir(dirname(cliPath), { recursive: true });
    await writeFile(cliPath, JSON.stringify({ accessToken: CLI_ACCESS, refreshToken: CLI_REFRESH }));
    await writeStateDb(cursorIdeStateDb(paths), [
      ["cursorAuth/accessToken", IDE_ACCESS],
      ["cursorAuth/refreshToken", new TextEncoder().encode(IDE_REFRESH)],
      ["cursorAuth/cachedEmail", '"ide@example.com"'],
    ]);
    const { report, credentials } = await findExistingCredentials({ paths, now });
    expect(report.chosen).toBe("ide-state");
    expect(credentials).toEqual({
      accessToken: IDE_ACCESS,
      refreshToken: IDE_REFRESH,
      source: "import:ide",
      email: "ide@example.com",
      userId: "user_ide",
    });
    expect(report.candidates[2]).toMatchObject({
      status: "found",
      keys: expect.arrayContaining(["cursorAuth/accessToken", "cursorAuth/refreshToken", "cursorAuth/cachedEmail"]),
      email: "ide@example.com",
      expired: false,
    });
    expectNoTokens(report);
  });

  it("marks broken and incomplete sources without quoting them", async () => {
    const cliPath = cursorCliAuthFile(paths);
    await mkdir(dirname(cliPath), { recursive: true });
    await writeFile(cliPath, `{"accessToken": "${CLI_ACCESS}"`);
    await writeStateDb(cursorIdeStateDb(paths), [["cursorAuth/refreshToken", IDE_REFRESH]]);
    const { report, credentials } = await findExistingCredentials({ paths, now });
    expect(credentials).toBeUndefined();
    expect(report.candidates[0]).toMatchObject({ status: "unreadable", problem: "the file is not valid JSON" });
    expect(report.candidates[2]).toMatchObject({ status: "incomplete", problem: "no access token" });
    expectNoTokens(report);
  });

  it("reports a file that is not SQLite as unreadable", async () => {
    const path = cursorIdeStateDb(paths);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, "definitely not sqlite");
    const { report } = await findExistingCredentials({ paths, now });
    expect(report.candidates[2]).toMatchObject({ status: "unreadable" });
  });

  it("reads the macOS keychain through the injected runner only on darwin", async () => {
    const calls: string[][] = [];
    const items: Record<string, string> = {
      "cursor-access-token": `${KEYCHAIN_ACCESS}\n`,
      "cursor-refresh-token": "mac-refresh-secret\n",
    };
    const runCommand: CommandRunner = async (file, args) => {
      calls.push([file, ...args]);
      const item = items[args[2] ?? ""];
      if (item === undefined) throw Object.assign(new Error("not found"), { code: 44 });
      return item;
    };
    const mac: PathEnvironment = { env: {}, platform: "darwin", homedir: home };
    const { report, credentials } = await findExistingCredentials({ paths: mac, runCommand, now });
    expect(calls[0]).toEqual(["security", "find-generic-password", "-s", "cursor-access-token", "-w"]);
    expect(calls).toHaveLength(3);
    expect(credentials).toMatchObject({ accessToken: KEYCHAIN_ACCESS, refreshToken: "mac-refresh-secret" });
    expect(report.chosen).toBe("cli-keychain");
    expect(report.candidates[1]).toMatchObject({ keys: ["cursor-access-token", "cursor-refresh-token"] });
    expectNoTokens(report);

    calls.length = 0;
    await findExistingCredentials({ paths, runCommand, now });
    expect(calls).toHaveLength(0);
  });

  it("uses the access token as refresh token when only an access token exists", async () => {
    const path = cursorCliAuthFile(paths);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify({ accessToken: CLI_ACCESS, apiKey: "key_abcdefghij" }));
    const { credentials } = await findExistingCredentials({ paths, now });
    expect(credentials).toMatchObject({ accessToken: CLI_ACCESS, refreshToken: CLI_ACCESS, apiKey: "key_abcdefghij" });
  });
});
