/**
 * The status page in a real browser: Debian's headless Chromium loads `GET /` from `cursor-bridge serve` (logged in,
 * against the emulator posing as Cursor) after requests from several clients went through, runs the page's script
 * (`--virtual-time-budget` lets its refresh timer fire) and dumps the rendered DOM, which must show the upstream,
 * the account, the plan usage bar with its reset time, the parked turn, the requests and the models; the access
 * log must show the page's own `/status.json` refreshes passing the Host and Origin guards. Skips with a printed
 * reason when Chromium is missing, unless CI=true (then it fails).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { startStack } from "../support/stack.js";

function findChromium(): string | undefined {
  const names = ["chromium", "chromium-browser", "google-chrome"];
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "");
  for (const dir of dirs) for (const name of names) if (existsSync(join(dir, name))) return join(dir, name);
  return existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined;
}

const CHROMIUM = findChromium();
if (CHROMIUM === undefined) {
  if (process.env.CI === "true") throw new Error("Chromium is required under CI=true (.ci/run installs it)");
  console.log("skipping the status page browser test: no chromium on PATH (Debian package `chromium`)");
}

/** Runs headless Chromium and resolves with what it printed on stdout. */
function chromium(args: string[], profile: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const sandbox = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  const fixed = ["--headless", "--disable-gpu", "--no-first-run", `--user-data-dir=${profile}`, ...sandbox];
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM ?? "chromium", [...fixed, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (stdout += part));
    child.stderr.setEncoding("utf8").on("data", (part: string) => (stderr += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The text of the element with `id` in a dumped DOM (tags removed, whitespace collapsed). */
function textOf(dom: string, id: string, tag: string): string {
  const start = dom.indexOf(`id="${id}"`);
  if (start < 0) return "";
  const end = dom.indexOf(`</${tag}>`, start);
  return dom
    .slice(dom.indexOf(">", start) + 1, end)
    .replace(/<[^>]*>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

describe.skipIf(CHROMIUM === undefined)("status page in headless Chromium", () => {
  let emulator: Emulator;
  let bridge: RunningBridge;
  let home: string;
  let token: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    home = mkdtempSync(join(tmpdir(), "cursor-bridge-status-"));
    for (const dir of ["config", "data"]) mkdirSync(join(home, dir));
    token = emulator.issueTokens({ email: "ada@example.com" }).accessToken;
    const io: CliIo = {
      out: () => {},
      err: (text) => logLines.push(text),
      isTty: false,
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, "config"),
        XDG_DATA_HOME: join(home, "data"),
        CURSOR_ACCESS_TOKEN: token,
      },
    };
    const args = ["--port", "0", "--upstream", "cursor", "--cursor-api-url", emulator.url, "--log-level", "info"];
    bridge = (await startBridge(io, args)).bridge;
  });
  afterAll(async () => {
    await bridge?.close();
    await emulator?.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  it("renders the upstream, account, usage, parked turns, requests and models, and refreshes itself", async () => {
    const base = `${bridge.server.url}/v1`;
    const openai = new OpenAI({ baseURL: base, apiKey: "x", maxRetries: 0 });
    await openai.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "hello" }] });
    const stream = await openai.chat.completions.create({
      model: "composer-1.5",
      stream: true,
      messages: [{ role: "user", content: "stream" }],
    });
    for await (const _ of stream) {
      // drain
    }
    await openai.chat.completions.create({
      model: "composer-1",
      messages: [{ role: "user", content: 'Park [[emu:tool bash {"command":"ls"}]]' }],
      tools: [{ type: "function", function: { name: "bash", parameters: { type: "object", properties: {} } } }],
    });
    await expect(
      openai.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toThrow();
    const anthropic = await fetch(`${base}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "claude-cli/2.1.330 (external, cli)" },
      body: JSON.stringify({ model: "claude-sonnet-5-5", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(anthropic.status).toBe(200);
    await anthropic.text();

    const profile = mkdtempSync(join(tmpdir(), "cursor-bridge-chromium-"));
    let result: Awaited<ReturnType<typeof chromium>>;
    try {
      result = await chromium(["--virtual-time-budget=7000", "--dump-dom", `${bridge.server.url}/`], profile);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
    const dom = result.stdout;
    const diagnostics = `exit ${result.code}\n${dom.slice(0, 3000)}\nstderr:\n${result.stderr.slice(-2000)}`;
    expect(dom, diagnostics).toContain('id="upstream" class="badge cursor"');
    expect(textOf(dom, "upstream", "span")).toBe("Cursor");
    expect(textOf(dom, "account", "span")).toBe("Logged in as ada@example.com");
    const usage = textOf(dom, "usage", "section");
    expect(usage, diagnostics).toMatch(
      /^\d+\.\d% used: \$\d+\.\d\d of \$20\.00 Auto \d+\.\d% \(\$\d+\.\d\d of \$20\.00\) · API \d+\.\d% \(\$\d+\.\d\d of \$20\.00\) · Total \d+\.\d% Resets \d{4}-\d\d-\d\d 00:00 UTC \(in /,
    );
    // The three percentages of GetCurrentPeriodUsage (cursor-protocol-addendum-3.md U1) as the emulator reports them.
    const status = (await (await fetch(`${bridge.server.url}/status.json`)).json()) as {
      usage: { autoPercentUsed: number; apiPercentUsed: number; totalPercentUsed: number };
    };
    const { autoPercentUsed, apiPercentUsed, totalPercentUsed } = status.usage;
    expect(totalPercentUsed).toBeGreaterThan(0);
    expect(autoPercentUsed + apiPercentUsed).toBeCloseTo(totalPercentUsed, 5);
    expect(textOf(dom, "usage-percentages", "div")).toBe(
      `Auto ${autoPercentUsed.toFixed(1)}% ($${((autoPercentUsed * 20) / 100).toFixed(2)} of $20.00) · API ${apiPercentUsed.toFixed(1)}% ($${((apiPercentUsed * 20) / 100).toFixed(2)} of $20.00) · Total ${totalPercentUsed.toFixed(1)}%`,
    );
    expect(dom).toMatch(/<div class="bar[^"]*"><div style="width: \d+(\.\d)?%;"><\/div><\/div>/);
    expect(textOf(dom, "parked", "table")).toMatch(/composer-1 \d+ s 1$/);
    const requests = textOf(dom, "requests", "table");
    // A Claude id of a version Cursor does not list resolves to the newest Sonnet Cursor lists, a parameterised base:
    // the row names the variant that ran and the parameters sent.
    expect(requests).toMatch(
      /messages · claude-cli\/2\.1\.330 claude-sonnet-5-thinking-medium · context=300k,effort=medium,thinking=true new \d+ ms \d+ 200/,
    );
    // A tool call's arguments are its first token (kit/request-io.ts).
    expect(requests, requests).toMatch(/chat · OpenAI\/JS composer-1 new, parked \d+ ms \d+ 200/);
    expect(requests).toMatch(/chat · OpenAI\/JS composer-1\.5 new \d+ ms \d+ 200/);
    expect(textOf(dom, "requests-count", "span")).toBe("(5)");
    // A failed request shows its error code, and the reason the client was told on hover.
    expect(dom).toMatch(
      /<td class="num bad" title="The model `no-such-model` does not exist\.[^"]*">404 \(not_found\)<\/td>/,
    );
    const models = textOf(dom, "models", "ul");
    expect(models).toContain("composer-1");
    expect(models).toContain("claude-4.5-sonnet");
    expect(textOf(dom, "updated", "span")).toMatch(/^Updated /);
    expect(dom).not.toContain(token);
    // The page's own refreshes reached /status.json through the guards.
    expect(logLines.join("").match(/GET \/status\.json 200/g)?.length ?? 0, logLines.join("")).toBeGreaterThanOrEqual(
      1,
    );
  });
});

describe.skipIf(CHROMIUM === undefined)("status page with named accounts in headless Chromium", () => {
  it("renders each account with who it is, its plan usage and its reset", async () => {
    const stack = await startStack({
      accounts: { alice: { userId: "user_alice", email: "alice@example.com" }, bob: { userId: "user_bob" } },
      defaultAccount: "alice",
    });
    const profile = mkdtempSync(join(tmpdir(), "cursor-bridge-chromium-"));
    try {
      stack.emulator.limitUsage("user_bob");
      const result = await chromium(["--virtual-time-budget=4000", "--dump-dom", `${stack.server.url}/`], profile);
      const dom = result.stdout;
      const diagnostics = `exit ${result.code}\n${dom.slice(0, 3000)}\nstderr:\n${result.stderr.slice(-2000)}`;
      expect(dom, diagnostics).not.toMatch(/id="accounts-section"[^>]*hidden/);
      const accounts = textOf(dom, "accounts", "table");
      expect(accounts, diagnostics).toMatch(
        /alice \(default\) alice@example\.com \d+\.\d% \(\$\d+\.\d\d of \$20\.00\) \d{4}-\d\d-\d\d 00:00 UTC \(in /,
      );
      expect(accounts).toMatch(/bob user_bob 100\.0% \(\$20\.00 of \$20\.00\) \d{4}-\d\d-\d\d/);
    } finally {
      rmSync(profile, { recursive: true, force: true });
      await stack.close();
    }
  });
});
