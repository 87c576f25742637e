/**
 * `cursor-bridge keys` and `cursor-bridge audit` through the real CLI entry, on the file store of a temporary data
 * directory: create (with every option), list, show, revoke and rotate, `--json` on each, the errors people hit
 * (duplicate name, `10/mnth`, `30days`, unknown key), the key file's mode and content (hashes only), and the audit
 * trail of a create, rotate and revoke sequence. The key is printed once, by create and rotate, and nowhere after.
 */
import { readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "./harness.js";

let harness: CliHarness;
let dataDir: string;
beforeAll(async () => {
  harness = await createCliHarness();
  dataDir = join(harness.home, "data");
  // A key is bound only to an account with a login (named accounts): the account `team` the keys below use.
  harness.emulator.addApiKey("cur_team_key_123456", { email: "team@example.com" });
  const login = await harness.run(["login", "--api-key", "--account", "team"], {
    env: { CURSOR_API_KEY: "cur_team_key_123456" },
  });
  expect(login.code, login.err).toBe(0);
});
afterAll(async () => {
  await harness?.close();
});

const keys = (...argv: string[]) => harness.run(["keys", ...argv, "--data-dir", dataDir]);
const json = <T>(text: string) => JSON.parse(text) as T;
const KEY = /^cbk-[A-Za-z0-9_-]{43}$/;

interface Issued {
  key: string;
  id: string;
  name: string;
  prefix: string;
  status: string;
  expiresAt: string | null;
  models: string[] | null;
  account: string | null;
  limits: Record<string, unknown>;
}

describe("cursor-bridge keys", () => {
  let alice: Issued;

  it("create --json prints the key once with every setting; the file holds its hash, mode 0600", async () => {
    const result = await keys(
      "create",
      "--name",
      "alice",
      "--budget",
      "10/month",
      "--rpm",
      "30",
      "--tpm",
      "50000",
      "--max-parallel",
      "2",
      "--models",
      "gpt-5*,claude-4.5-sonnet",
      "--account",
      "team",
      "--expires",
      "30d",
      "--json",
    );
    expect(result.code).toBe(0);
    alice = json<Issued>(result.out);
    expect(alice.key).toMatch(KEY);
    expect(alice).toMatchObject({
      name: "alice",
      status: "active",
      prefix: alice.key.slice(0, 10),
      models: ["gpt-5*", "claude-4.5-sonnet"],
      account: "team",
      limits: { rpm: 30, tpm: 50000, maxParallel: 2, budget: { usd: 10, period: "month" } },
    });
    const days = (Date.parse(alice.expiresAt ?? "") - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    harness.secrets.add(alice.key);
    const file = readFileSync(join(dataDir, "keys.json"), "utf8");
    expect(file).not.toContain(alice.key);
    expect(file).toMatch(/"hash": "[0-9a-f]{64}"/);
    expect(statSync(join(dataDir, "keys.json")).mode & 0o777).toBe(0o600);
  });

  it("create in text says the key is shown only once", async () => {
    const result = await keys("create", "--name", "bob");
    expect(result.code).toBe(0);
    const key = result.out.match(/cbk-[A-Za-z0-9_-]{43}/)?.[0];
    expect(key).toBeDefined();
    harness.secrets.add(key ?? "");
    expect(result.out).toContain('Created key "bob"');
    expect(result.out).toContain("only time the key is shown");
  });

  it("refuses a duplicate name, a bad budget, a bad duration and a missing name (exit 2, clear messages)", async () => {
    const duplicate = await keys("create", "--name", "alice");
    expect(duplicate.code).toBe(2);
    expect(duplicate.err).toContain('A key named "alice" already exists');
    const budget = await keys("create", "--name", "carol", "--budget", "10/mnth");
    expect(budget.code).toBe(2);
    expect(budget.err).toMatch(/Invalid --budget "10\/mnth": expected USD\/PERIOD with PERIOD day, week or month/);
    const duration = await keys("create", "--name", "carol", "--expires", "30days");
    expect(duration.code).toBe(2);
    expect(duration.err).toMatch(/Invalid --expires "30days": expected a number and a unit m, h, d or w/);
    const rpm = await keys("create", "--name", "carol", "--rpm", "0", "--json");
    expect(rpm.code).toBe(2);
    expect(json<{ error: { message: string } }>(rpm.out).error.message).toContain("Invalid --rpm");
    expect((await keys("create")).err).toContain("needs --name NAME");
    expect((await keys("frobnicate")).code).toBe(2);
    expect((await keys("show")).err).toContain("needs the key's NAME or ID");
  });

  it("list and show (text and --json) never print a key", async () => {
    const listed = await keys("list", "--json");
    expect(listed.code).toBe(0);
    const body = json<{ keys: Issued[]; location: string }>(listed.out);
    expect(body.keys.map((k) => k.name)).toEqual(["alice", "bob"]);
    expect(body.location).toBe(join(dataDir, "keys.json"));
    expect(JSON.stringify(body)).not.toMatch(/"hash"/);
    const table = await keys("list");
    expect(table.out).toMatch(/NAME\s+ID\s+KEY\s+STATUS/);
    expect(table.out).toMatch(/alice\s+vk_[0-9a-f]{16}\s+cbk-\S{6}…\s+active/);
    expect(table.out).toContain("$10/month, 30 rpm, 50000 tpm, 2 parallel");
    const byId = json<Issued>((await keys("show", alice.id, "--json")).out);
    expect(byId.name).toBe("alice");
    const text = await keys("show", "alice");
    expect(text.out).toMatch(/Models\s+gpt-5\*, claude-4\.5-sonnet/);
    const missing = await keys("show", "nobody");
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('No key named or with the id "nobody"');
  });

  it("rotate gives a new key for the same record; revoke marks it; a revoked name can be reused", async () => {
    const rotated = json<Issued>((await keys("rotate", "alice", "--json")).out);
    expect(rotated.key).toMatch(KEY);
    expect(rotated.key).not.toBe(alice.key);
    expect(rotated.id).toBe(alice.id);
    harness.secrets.add(rotated.key);
    const revoked = await keys("revoke", "alice");
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain('Revoked key "alice"');
    expect(json<Issued>((await keys("show", alice.id, "--json")).out).status).toBe("revoked");
    const again = await keys("revoke", "alice");
    expect(again.code).toBe(2);
    expect(again.err).toContain("is revoked");
    const reused = json<Issued>((await keys("create", "--name", "alice", "--json")).out);
    harness.secrets.add(reused.key);
    expect(reused.id).not.toBe(alice.id);
    expect(json<Issued>((await keys("show", "alice", "--json")).out).id).toBe(reused.id);
  });

  it("audit shows the create, rotate and revoke sequence (who, what, when, from where), with no key material", async () => {
    const result = await harness.run(["audit", "--json", "--data-dir", dataDir]);
    expect(result.code).toBe(0);
    const { entries, location } = json<{ entries: Record<string, unknown>[]; location: string }>(result.out);
    expect(location).toBe(join(dataDir, "audit.log"));
    const aliceOps = entries.filter((e) => e.target === "alice").map((e) => e.action);
    expect(aliceOps).toEqual(["key.create", "key.rotate", "key.revoke", "key.create"]);
    for (const entry of entries) {
      expect(entry.actor).toMatch(/^cli:/);
      expect(entry.from).toBe(`cli@${hostname()}`);
      expect(Number.isNaN(Date.parse(String(entry.at)))).toBe(false);
    }
    expect(entries[0]?.detail).toEqual({ id: alice.id });
    expect(statSync(join(dataDir, "audit.log")).mode & 0o777).toBe(0o600);
    const limited = json<{ entries: unknown[] }>(
      (await harness.run(["audit", "--json", "--limit", "2", "--data-dir", dataDir])).out,
    );
    expect(limited.entries).toHaveLength(2);
    const table = await harness.run(["audit", "--data-dir", dataDir]);
    expect(table.out).toMatch(/WHEN\s+WHO\s+WHAT\s+TARGET/);
    expect(table.out).toContain("key.rotate");
  });

  it("--help explains the commands and options", async () => {
    const help = await harness.run(["keys", "--help"]);
    expect(help.out).toContain("create --name NAME");
    expect(help.out).toContain("--budget USD/PERIOD");
    expect(help.out).toContain("--expires DURATION");
    expect((await harness.run(["audit", "--help"])).out).toContain("--limit N");
  });
});
