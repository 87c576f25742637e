/**
 * The status page's key table in a real browser: Debian's headless Chromium loads `GET /` from a bridge whose admin
 * check accepts it, runs the page's script and dumps the DOM, which must show each key's requests, tokens, spend
 * against budget and reset. Then the admin sign-in, driven over the DevTools protocol: the page asks for the admin
 * key, keeps it in the tab's sessionStorage, shows the keys table, and no request it made carries the key in a URL. Skips with a printed reason when Chromium is missing, unless CI=true (then it fails).
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
import { openBrowserPage } from "../support/chromium-cdp.js";
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
  const keys: KeyTable = new Map([["carol", { budget: { usd: 0.001, period: "month" as const } }]]);
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
        // A cap with room for the whole answer (the kit cuts at the cap, 4 characters a token) that keeps the
        // budget's worst case (reserved before the turn, some 865 µ$) under the key's small budget.
        max_tokens: 30,
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
      /carol 1 46 in \(40 cached\) · 12 out \(7 reasoning\) \$0\.0002 of \$0\.0010 \(25%\) month, resets \d{4}-\d\d-01 00:00 UTC \(in /,
    );
  });
});

describe.skipIf(CHROMIUM === undefined)("admin sign-in on the status page in headless Chromium", () => {
  const ADMIN = "the-admin-key-of-this-test-0123456789";
  let stack: Stack;
  const keys: KeyTable = new Map([["dora", {}]]);
  beforeAll(async () => {
    const limits = testLimits(keys, {
      counters: createMemoryLimitCounters(),
      spend: createMemorySpendStore(),
      logger: silentLogger,
    });
    stack = await startStack({
      limits: limits.middleware,
      status: {
        keys: {
          usage: createKeyUsageSource(limits),
          isAdmin: (request) => request.headers.get("authorization") === `Bearer ${ADMIN}`,
          inUse: () => true,
        },
      },
    });
  });
  afterAll(async () => stack?.close());

  it("asks for the admin key once, keeps it in sessionStorage, shows the keys table; no URL carries the key", async () => {
    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer dora" },
      body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    // Without the key the page holds no data, only the sign-in; /status.json is 401.
    const bare = await (await fetch(`${stack.server.url}/`)).text();
    expect(bare).not.toContain("dora");
    expect((await fetch(`${stack.server.url}/status.json`)).status).toBe(401);

    const page = await openBrowserPage(CHROMIUM ?? "chromium");
    try {
      await page.goto(`${stack.server.url}/`);
      await page.waitFor<boolean>(`!document.getElementById("signin").hidden`);
      expect(await page.evaluate<boolean>(`document.getElementById("content").hidden`)).toBe(true);
      // A wrong key is refused and forgotten.
      await page.evaluate(
        `(() => { document.getElementById("admin-key").value = "wrong"; document.getElementById("signin-button").click(); })()`,
      );
      await page.waitFor<boolean>(`document.getElementById("signin-error").textContent.includes("not accepted")`);
      expect(await page.evaluate<string | null>(`sessionStorage.getItem("cursor-bridge-admin-key")`)).toBeNull();
      // The admin key, typed once.
      await page.evaluate(
        `(() => { document.getElementById("admin-key").value = ${JSON.stringify(ADMIN)}; document.getElementById("signin-button").click(); })()`,
      );
      const table = await page.waitFor<string>(
        `!document.getElementById("keys-section").hidden && document.getElementById("keys-section").textContent`,
      );
      expect(table).toContain("Keys (1)");
      expect(table).toContain("dora");
      expect(await page.evaluate<string>(`sessionStorage.getItem("cursor-bridge-admin-key")`)).toBe(ADMIN);
      expect(await page.evaluate<string>("document.cookie")).toBe("");
      expect(await page.evaluate<string>(`document.getElementById("admin-key").value`)).toBe("");
      // A reload stays signed in (the tab's sessionStorage), and the page's refreshes send the key as a header.
      await page.goto(`${stack.server.url}/`);
      await page.waitFor<string>(
        `!document.getElementById("keys-section").hidden && document.getElementById("keys-section").textContent.includes("dora")`,
      );
      const statusRequests = page.requests.filter((request) => request.url.endsWith("/status.json"));
      expect(statusRequests.length).toBeGreaterThan(0);
      const authorizations = statusRequests.map(
        (request) => Object.entries(request.headers).find(([name]) => name.toLowerCase() === "authorization")?.[1],
      );
      expect(authorizations).toContain(`Bearer ${ADMIN}`);
      for (const request of page.requests) expect(request.url).not.toContain(ADMIN);
    } finally {
      await page.close();
    }
  });
});
