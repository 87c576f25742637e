/**
 * The status page's key table in a real browser: Debian's headless Chromium loads `GET /` from a bridge whose admin
 * check accepts it, runs the page's script and dumps the DOM, which must show each key's requests, tokens, spend
 * against budget and reset. Skips with a printed reason when Chromium is missing, unless CI=true (then it fails).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyUsageSource } from "../../src/gateway/limits/index.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, testLimits } from "./support.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path));
if (CHROMIUM === undefined) {
  if (process.env.CI === "true") throw new Error("Chromium is required under CI=true (.ci/run installs it)");
  console.log("skipping the key table browser test: no chromium (Debian package `chromium`)");
}

function dumpDom(url: string): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), "cursor-bridge-chromium-"));
  const sandbox = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  const args = ["--headless", "--disable-gpu", "--no-first-run", `--user-data-dir=${profile}`, ...sandbox];
  return new Promise((resolve, reject) => {
    const child = spawn(CHROMIUM ?? "chromium", [...args, "--virtual-time-budget=2000", "--dump-dom", url], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (stdout += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.once("error", reject);
    child.once("close", () => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      resolve(stdout);
    });
  });
}

describe.skipIf(CHROMIUM === undefined)("key table in headless Chromium", () => {
  let stack: Stack;
  const keys: KeyTable = new Map([["carol", { budget: { usd: 0.0003, period: "month" as const } }]]);
  beforeAll(async () => {
    const limits = testLimits(keys, {
      counters: createMemoryLimitCounters(),
      spend: createMemorySpendStore(),
      logger: silentLogger,
    });
    stack = await startStack({
      limits: limits.middleware,
      status: { keys: { usage: createKeyUsageSource(limits), isAdmin: () => true } },
    });
  });
  afterAll(async () => stack?.close());

  it("shows each key's requests, tokens, spend against budget and the reset", async () => {
    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer carol" },
      body: JSON.stringify({
        model: "auto",
        // A small cap keeps the budget's worst case (reserved before the turn) under the key's tiny budget.
        max_tokens: 1,
        messages: [{ role: "user", content: "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]" }],
      }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const dom = await dumpDom(`${stack.server.url}/`);
    const section = dom.slice(
      dom.indexOf('id="keys-section"'),
      dom.indexOf("</section>", dom.indexOf('id="keys-section"')),
    );
    expect(section, dom.slice(0, 2000)).not.toContain("hidden");
    const text = section.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");
    expect(text).toContain("Keys (1)");
    expect(text).toMatch(
      /carol 1 46 in \(40 cached\) · 12 out \(7 reasoning\) \$0\.0002 of \$0\.0003 \(82%\) month, resets \d{4}-\d\d-01 00:00 UTC \(in /,
    );
  });
});
