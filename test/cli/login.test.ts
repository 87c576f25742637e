import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness, fakeInput, readStoredCredentials } from "./harness.js";

let harness: CliHarness;
beforeEach(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await harness.close();
});

/** Approves the login as soon as the CLI prints its URL, like a user clicking "Approve". */
function approveOnUrl(email: string): (text: string) => void {
  return (text) => {
    const match = /[?&]uuid=([0-9a-f-]{36})/.exec(text);
    if (match?.[1] !== undefined) harness.emulator.approveLogin(match[1], { email });
  };
}

describe("login (browser, PKCE)", () => {
  it("prints the loginDeepControl URL, polls until approved and stores the session 0600 in a 0700 dir", async () => {
    const result = await harness.run(["login", "--no-browser"], { onOutput: approveOnUrl("ada@example.com") });
    expect(result.code).toBe(0);
    expect(result.out).toContain(`${harness.emulator.url}/loginDeepControl?challenge=`);
    expect(result.out).toContain("Logged in as ada@example.com");
    const stored = readStoredCredentials(harness);
    expect(stored.record.source).toBe("login");
    expect(stored.record.email).toBe("ada@example.com");
    expect(stored.fileMode).toBe(0o600);
    expect(stored.dirMode).toBe(0o700);
    harness.expectNoSecrets(result.out + result.err);
  });

  it("--json prints one JSON document on stdout and keeps the URL on stderr", async () => {
    const result = await harness.run(["login", "--no-browser", "--json"], { onOutput: approveOnUrl("bo@example.com") });
    expect(result.code).toBe(0);
    expect(result.err).toContain("/loginDeepControl?");
    const body = JSON.parse(result.out) as Record<string, unknown>;
    expect(body).toMatchObject({ loggedIn: true, email: "bo@example.com", source: "login", hasApiKey: false });
    expect(Object.keys(body)).not.toContain("accessToken");
    readStoredCredentials(harness);
    harness.expectNoSecrets(result.out + result.err);
  });

  it("prints progress lines while waiting and a clear message when approval never comes", async () => {
    const result = await harness.run(["login", "--no-browser", "--timeout", "0.3"]);
    expect(result.code).toBe(4);
    expect(result.err).toContain("Waiting for approval in the browser (check 1");
    expect(result.err).toMatch(/not approved within 0\.3 s\. Run `cursor-bridge login` again/);
    expect(existsSync(join(harness.configDir, "credentials.json"))).toBe(false);
  });

  it("shows a spinner on a terminal and clears it once approved", async () => {
    const result = await harness.run(["login", "--no-browser"], {
      isTty: true,
      onOutput: approveOnUrl("tty@example.com"),
    });
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/\r\| Waiting for approval in the browser… \d+s/);
    expect(result.err.endsWith("\r\u001b[K")).toBe(true);
  });

  it("rejects a bad --timeout as a usage error", async () => {
    const result = await harness.run(["login", "--timeout", "soon"]);
    expect(result.code).toBe(2);
    expect(result.err).toContain("--timeout expects a positive number of seconds");
  });
});

describe("login --api-key", () => {
  const KEY = "key_test_0123456789abcdefghij";

  it("exchanges CURSOR_API_KEY and keeps the key for refreshes", async () => {
    harness.secrets.add(KEY);
    harness.emulator.addApiKey(KEY, { email: "key@example.com" });
    const result = await harness.run(["login", "--api-key"], { env: { CURSOR_API_KEY: KEY } });
    expect(result.code).toBe(0);
    expect(result.out).toContain("Using the API key from CURSOR_API_KEY");
    expect(result.out).toContain("Logged in as key@example.com");
    const stored = readStoredCredentials(harness);
    expect(stored.record).toMatchObject({ source: "api-key", apiKey: KEY });
    expect(stored.fileMode).toBe(0o600);
  });

  it("reads the key from piped stdin", async () => {
    harness.secrets.add(KEY);
    harness.emulator.addApiKey(KEY, { email: "pipe@example.com" });
    const input = fakeInput({ isTty: false, text: `${KEY}\n` });
    const result = await harness.run(["login", "--api-key", "--json"], { input });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out)).toMatchObject({ loggedIn: true, email: "pipe@example.com", hasApiKey: true });
  });

  it("prompts without echo on a terminal", async () => {
    harness.secrets.add(KEY);
    harness.emulator.addApiKey(KEY);
    const prompts: string[] = [];
    const input = {
      isTty: true,
      readAll: async () => "",
      readSecret: async (prompt: string) => {
        prompts.push(prompt);
        return KEY;
      },
    };
    const result = await harness.run(["login", "--api-key"], { input });
    expect(result.code).toBe(0);
    expect(prompts).toEqual(["Cursor API key (input hidden): "]);
  });

  it("fails with exit 3 when Cursor rejects the key, and never echoes it", async () => {
    const wrong = "key_wrong_0123456789abcdefghij";
    harness.secrets.add(wrong);
    const result = await harness.run(["login", "--api-key"], { input: fakeInput({ isTty: false, text: wrong }) });
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/rejected/);
    expect(existsSync(join(harness.configDir, "credentials.json"))).toBe(false);
  });

  it("fails with a usage error when no key is given", async () => {
    const result = await harness.run(["login", "--api-key"], { input: fakeInput({ isTty: false, text: "  \n" }) });
    expect(result.code).toBe(2);
    expect(result.err).toContain("No API key given");
  });

  it("takes the key as --api-key KEY or --api-key=KEY, says it lands in shell history, and never echoes it", async () => {
    harness.secrets.add(KEY);
    harness.emulator.addApiKey(KEY, { email: "arg@example.com" });
    for (const argv of [
      ["login", "--api-key", KEY],
      ["login", `--api-key=${KEY}`, "--json"],
    ]) {
      const result = await harness.run(argv);
      expect(result.code, result.err).toBe(0);
      expect(result.err).toContain("stays in your shell's history");
      expect(`${result.out}${result.err}`).not.toContain(KEY);
      expect(readStoredCredentials(harness).record).toMatchObject({ source: "api-key", apiKey: KEY });
    }
  });

  it("never echoes a key passed as a stray argument", async () => {
    harness.secrets.add(KEY);
    const result = await harness.run(["login", KEY]);
    expect(result.code).toBe(2);
    expect(result.err).toContain("the extra argument is not shown");
    expect(result.err).not.toContain(KEY);
  });
});

describe("corrupt credential file", () => {
  function writeCorrupt(): string {
    mkdirSync(harness.configDir, { recursive: true, mode: 0o700 });
    const path = join(harness.configDir, "credentials.json");
    writeFileSync(path, '{"token": "not ours"}', { mode: 0o600 });
    return path;
  }

  it("status names the file and exits 3 without touching it", async () => {
    const path = writeCorrupt();
    const result = await harness.run(["status"]);
    expect(result.code).toBe(3);
    expect(result.err).toContain(path);
    expect(result.err).toContain("not a valid cursor-bridge credential file");
    expect(readFileSync(path, "utf8")).toBe('{"token": "not ours"}');
  });

  it("login says it will replace the file, then does", async () => {
    const path = writeCorrupt();
    const result = await harness.run(["login", "--no-browser"], { onOutput: approveOnUrl("fix@example.com") });
    expect(result.code).toBe(0);
    expect(result.err).toContain(path);
    expect(result.err).toContain("Logging in will replace that file.");
    const stored = readStoredCredentials(harness);
    expect(stored.record.email).toBe("fix@example.com");
    expect(stored.fileMode).toBe(0o600);
  });

  it("logout removes it", async () => {
    writeCorrupt();
    const result = await harness.run(["logout"]);
    expect(result.code).toBe(0);
    expect(existsSync(join(harness.configDir, "credentials.json"))).toBe(false);
  });
});
