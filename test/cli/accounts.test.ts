/**
 * Named Cursor accounts on the command line (issue #29), offline against the emulator: `login --account`,
 * `import --account`, `logout --account`, `accounts` and `accounts default`, `status` per account, the audit log
 * entries of logins and logouts, and the errors for bad or unknown names. The record users always had stays the
 * account `default`, untouched by any of it.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { runLogin } from "../../src/cli/login.js";
import { runLogout } from "../../src/cli/logout.js";
import { createMemoryAuditLog } from "../../src/stores/memory/audit-log.js";
import { type CliHarness, createCliHarness, issueTokens, readStoredCredentials } from "./harness.js";

let harness: CliHarness;
beforeEach(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await harness.close();
});

function approveOnUrl(email: string, userId: string): (text: string) => void {
  return (text) => {
    const match = /[?&]uuid=([0-9a-f-]{36})/.exec(text);
    if (match?.[1] !== undefined) harness.emulator.approveLogin(match[1], { email, userId });
  };
}

const accountFile = (name: string) => join(harness.configDir, "accounts", `${name}.json`);

function readAccount(name: string): { accessToken: string; refreshToken: string; email?: string; source: string } {
  const record = JSON.parse(readFileSync(accountFile(name), "utf8")) as {
    accessToken: string;
    refreshToken: string;
    email?: string;
    source: string;
  };
  harness.secrets.add(record.accessToken);
  harness.secrets.add(record.refreshToken);
  return record;
}

async function loginAs(name: string | undefined, email: string, userId: string) {
  const argv = ["login", "--no-browser", ...(name === undefined ? [] : ["--account", name])];
  const result = await harness.run(argv, { onOutput: approveOnUrl(email, userId) });
  expect(result.code, result.err).toBe(0);
  return result;
}

describe("login / import / logout --account", () => {
  it("keeps several logins side by side; the unnamed one stays credentials.json (the account `default`)", async () => {
    await loginAs(undefined, "main@example.com", "user_main");
    const alice = await loginAs("alice", "alice@example.com", "user_alice");
    expect(alice.out).toMatch(/Account\s+alice/);
    expect(alice.out).toContain(accountFile("alice"));
    expect(readAccount("alice").email).toBe("alice@example.com");
    expect(statSync(accountFile("alice")).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(accountFile("alice"))).mode & 0o777).toBe(0o700);
    expect(readStoredCredentials(harness).record.email).toBe("main@example.com");

    // Import as bob, from the Cursor CLI's auth.json.
    const pair = issueTokens(harness, { email: "bob@example.com", userId: "user_bob" });
    const auth = join(harness.home, ".config", "cursor", "auth.json");
    mkdirSync(dirname(auth), { recursive: true });
    writeFileSync(auth, JSON.stringify(pair));
    const imported = await harness.run(["import", "--account", "bob", "--json"]);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({ imported: true, account: "bob" });
    expect(readAccount("bob").source).toBe("import:cli");

    const listed = await harness.run(["accounts", "--json"]);
    expect(JSON.parse(listed.out)).toMatchObject({
      defaultAccount: "default",
      accounts: [
        { name: "alice", email: "alice@example.com", default: false, source: "login" },
        { name: "bob", email: "bob@example.com", default: false, source: "import:cli" },
        { name: "default", email: "main@example.com", default: true },
      ],
    });
    const human = await harness.run(["accounts"]);
    expect(human.out).toMatch(/default \*\s+main@example\.com/);

    const out = await harness.run(["logout", "--account", "alice", "--json"]);
    expect(JSON.parse(out.out)).toMatchObject({ removed: true, account: "alice" });
    expect(existsSync(accountFile("alice"))).toBe(false);
    expect(readAccount("bob").email).toBe("bob@example.com");
    expect(readStoredCredentials(harness).record.email).toBe("main@example.com");
    const again = await harness.run(["logout", "--account", "alice"]);
    expect(again.out).toContain("Already logged out");
  });

  it("chooses the default account; commands without --account then act on it", async () => {
    await loginAs(undefined, "main@example.com", "user_main");
    await loginAs("alice", "alice@example.com", "user_alice");
    const chosen = await harness.run(["accounts", "default", "alice"]);
    expect(chosen.code).toBe(0);
    expect(chosen.out).toContain("Default account: alice");
    expect(JSON.parse(readFileSync(join(harness.configDir, "accounts.json"), "utf8"))).toEqual({
      version: 1,
      default: "alice",
    });
    const status = await harness.run(["status", "--json"]);
    expect(JSON.parse(status.out)).toMatchObject({ account: "alice", credentials: { email: "alice@example.com" } });
    expect((await harness.run(["accounts", "default", "default"])).code).toBe(0);
    expect(JSON.parse((await harness.run(["status", "--json"])).out)).toMatchObject({ account: "default" });
    // `logout` without --account logs the default account out, and says what that means for requests.
    expect((await harness.run(["accounts", "default", "alice"])).code).toBe(0);
    const out = await harness.run(["logout"]);
    expect(out.out).toContain(`removed ${accountFile("alice")}`);
    expect(out.out).toContain("alice was the default account: requests that name no account fail");
    expect(readStoredCredentials(harness).record.email).toBe("main@example.com");
  });

  it("refuses invalid names, unknown accounts and stray arguments with exit 2 and a hint", async () => {
    for (const argv of [
      ["login", "--account", "Alice"],
      ["logout", "--account", "../x"],
      ["import", "--account", ""],
    ]) {
      const result = await harness.run(argv);
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.err).toMatch(/not a valid account name: use 1 to 64 lowercase letters/);
    }
    const unknown = await harness.run(["accounts", "default", "carol"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("There is no login for the account `carol` (accounts: none yet)");
    expect(unknown.err).toContain("cursor-bridge login --account carol");
    expect((await harness.run(["accounts", "default"])).err).toContain("Name the account");
    expect((await harness.run(["accounts", "frobnicate"])).err).toContain("Unknown accounts command `frobnicate`");
    expect((await harness.run(["accounts", "--help"])).out).toContain("accounts default NAME");
    expect((await harness.run(["login", "--help"])).out).toContain("--account <name>");
    expect((await harness.run(["logout", "--help"])).out).toContain("--account <name>");
    expect((await harness.run(["import", "--help"])).out).toContain("--account <name>");
  });
});

describe("status per account", () => {
  it("shows each account's identity, plan usage and reset; an account at its limit shows the whole limit used", async () => {
    await loginAs(undefined, "main@example.com", "user_main");
    await loginAs("alice", "alice@example.com", "user_alice");
    harness.emulator.limitUsage("user_alice");
    const result = await harness.run(["status", "--json"]);
    const body = JSON.parse(result.out) as {
      accounts: { name: string; default: boolean; email: string; usage: { usedFraction: number; cycleEnd: string } }[];
    };
    expect(body.accounts.map((a) => [a.name, a.default, a.email])).toEqual([
      ["alice", false, "alice@example.com"],
      ["default", true, "main@example.com"],
    ]);
    expect(body.accounts[0]?.usage.usedFraction).toBe(1);
    expect(body.accounts[1]?.usage.usedFraction).toBeLessThan(1);
    expect(Date.parse(body.accounts[0]?.usage.cycleEnd ?? "")).toBeGreaterThan(Date.now());
    const human = await harness.run(["status"]);
    expect(human.out).toMatch(/ACCOUNT\s+WHO\s+PLAN USAGE\s+RESETS/);
    expect(human.out).toMatch(/alice\s+alice@example\.com\s+100\.0% \(\$20\.00 of \$20\.00\)\s+\d{4}-\d{2}-\d{2} /);
    expect(human.out).toMatch(/default \*\s+main@example\.com\s+\d+\.\d% /);
  });
});

describe("audit", () => {
  it("writes login and logout to the audit log passed in, naming the account and no token", async () => {
    const auditLog = createMemoryAuditLog();
    let out = "";
    const io: CliIo = {
      out: (text) => {
        out += text;
        const match = /[?&]uuid=([0-9a-f-]{36})/.exec(text);
        if (match?.[1] !== undefined) harness.emulator.approveLogin(match[1], { email: "alice@example.com" });
      },
      err: (text) => {
        out += text;
      },
      isTty: false,
      env: harness.env,
    };
    expect(await runLogin(["login", "--no-browser", "--account", "alice"].slice(1), io, { audit: auditLog })).toBe(0);
    expect(await runLogout(["--account", "alice"], io, { audit: auditLog })).toBe(0);
    // A logout that removed nothing is no event.
    expect(await runLogout(["--account", "alice"], io, { audit: auditLog })).toBe(0);
    const entries = await auditLog.read();
    expect(entries.map((entry) => [entry.action, entry.target, entry.from])).toEqual([
      ["login", "alice", expect.stringMatching(/^cli@/)],
      ["logout", "alice", expect.stringMatching(/^cli@/)],
    ]);
    expect(entries[0]?.actor).toMatch(/^cli:/);
    expect(entries[0]?.detail).toEqual({ source: "login" });
    harness.expectNoSecrets(JSON.stringify(entries) + out);
  });
});

describe("audit without one passed in", () => {
  it("import and logout as the real commands run them are in `cursor-bridge audit` (the gateway's log on the data dir)", async () => {
    const pair = issueTokens(harness, { email: "dora@example.com", userId: "user_dora" });
    const auth = join(harness.home, ".config", "cursor", "auth.json");
    mkdirSync(dirname(auth), { recursive: true });
    writeFileSync(auth, JSON.stringify(pair));
    expect((await harness.run(["import", "--account", "dora"])).code).toBe(0);
    expect((await harness.run(["logout", "--account", "dora"])).code).toBe(0);
    const read = await harness.run(["audit", "--json"]);
    expect(read.code, read.err).toBe(0);
    const entries = (JSON.parse(read.out) as { entries: { action: string; target: string; from: string }[] }).entries;
    expect(entries.filter((entry) => entry.target === "dora").map((entry) => entry.action)).toEqual([
      "login",
      "logout",
    ]);
    harness.expectNoSecrets(read.out);
  });
});

describe("keys create --account", () => {
  it("binds a key only to an account with a login", async () => {
    const unknown = await harness.run(["keys", "create", "--name", "k1", "--account", "carol"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("There is no login for the account `carol`");
    const invalid = await harness.run(["keys", "create", "--name", "k1", "--account", "Carol"]);
    expect(invalid.code).toBe(2);
    expect(invalid.err).toContain("not a valid account name");
    await loginAs("alice", "alice@example.com", "user_alice");
    const created = await harness.run(["keys", "create", "--name", "k1", "--account", "alice", "--json"]);
    expect(created.code, created.err).toBe(0);
    const body = JSON.parse(created.out) as { key?: string; account?: string };
    if (body.key !== undefined) harness.secrets.add(body.key);
    expect(JSON.stringify(body)).toContain('"alice"');
  });

  it("status and doctor say serve refuses to start when only named accounts have logins, as serve does", async () => {
    await loginAs("alice", "alice@example.com", "user_alice");
    const status = await harness.run(["status"]);
    expect(status.code).toBe(3);
    expect(status.out).not.toContain("answers with the built-in emulator");
    expect(status.out).toContain("`cursor-bridge serve` refuses to start until then");
    expect(status.out).toMatch(
      /Serve\s+refuses to start: The default account `default` has no Cursor login, but alice has one/,
    );
    const json = JSON.parse((await harness.run(["status", "--json"])).out) as { upstream: Record<string, unknown> };
    expect(json.upstream).toMatchObject({ emulator: false, serve: "refused" });
    expect(json.upstream.serveRefusal).toContain("but alice has one");
    const doctor = await harness.run(["doctor", "--json"]);
    const checks = (JSON.parse(doctor.out) as { checks: { id: string; status: string; detail: string }[] }).checks;
    const byId = new Map(checks.map((check) => [check.id, check]));
    expect(byId.get("serve")).toMatchObject({ status: "fail" });
    expect(byId.get("serve")?.detail).toContain("`cursor-bridge serve` refuses to start");
    expect(byId.get("credentials")?.status).toBe("fail");
    expect(doctor.out).not.toContain("answers with the built-in emulator");
    expect(doctor.code).not.toBe(0);
    // And serve itself refuses, with the same words.
    const serve = await harness.run(["serve", "--port", "0"]);
    expect(serve.code).toBe(3);
    expect(serve.err).toContain("The default account `default` has no Cursor login, but alice has one");
  });
});
