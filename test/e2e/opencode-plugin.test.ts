/**
 * The OpenCode plugin as its users run it: OpenCode 1.18.33 (test/clients) loads it from the entry `cursor-bridge setup
 * opencode-plugin --write` put in the global opencode.json (this repository's path; the package entry is
 * `src/opencode/index.ts`), with a temporary HOME, `OPENCODE_AUTH_CONTENT` holding an API-key
 * credential, and `CURSOR_API_URL` pointing at a standalone emulator (`cursor-bridge emulator --api-key KEY`, its own
 * process, read through `GET /emulator/stats`). The plugin starts the bridge as a Node child; these tests find that
 * child by its command line and HOME in /proc, and check it is gone once OpenCode is — after a normal exit and after
 * `kill -9`.
 *
 * OpenCode installs `@opencode-ai/plugin` from the npm registry before it loads any plugin (its startup hangs when the
 * registry is unreachable), so unlike the provider-block test this one leaves `npm_config_registry` alone.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CURSOR_OAUTH_CLIENT_ID } from "../../src/auth/exchange.js";
import { isAlive } from "../support/processes.js";
import { clientDiagnostics, closedPort, startClient } from "./support/client-process.js";
import {
  OPENCODE_PERMISSION,
  openCodeEvents,
  openCodeRunArgs,
  openCodeSettings,
  openCodeText,
  OPENCODE_TIMEOUT_MS as RUN_TIMEOUT_MS,
  startOpenCode as startOpenCodeIn,
} from "./support/opencode.js";
import { pluginEnv, pluginSkipReason, setupPlugin, useStandaloneEmulator } from "./support/plugin-env.js";
import { OPENCODE_BINARY as BINARY } from "./support/test-clients.js";

/** The repository itself: OpenCode reads its package.json (`main`, `exports["./server"]`) as it would an installed package. */
const PLUGIN = new URL("../..", import.meta.url).href.replace(/\/$/, "");
const API_KEY = `e2e-key-${randomBytes(6).toString("hex")}`;
const MAIN_MODEL = "composer-1";
const TITLE_MODEL = "claude-4.5-sonnet";
/**
 * The child watches OpenCode and exits within a second of it. The poll proves it exits, not how fast: 2 s missed once
 * at a load average of 10 on a 2-core machine, so it allows 10.
 */
const CHILD_EXIT_POLL_MS = 10_000;

const reason = await pluginSkipReason();
if (reason !== undefined) console.log(`skipping the OpenCode plugin end-to-end test: ${reason}`);

/** Pids of `cursor-bridge.js serve` processes whose HOME is `home` (the plugin's children in that OpenCode HOME). */
function bridgeChildren(home: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!cmdline.some((arg) => arg.endsWith("cursor-bridge.js")) || !cmdline.includes("serve")) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (environ.includes(`HOME=${home}`)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return pids;
}

/** Approves a browser login on the emulator's page, as a user clicking "Approve" would. */
async function approveInBrowser(loginUrl: string): Promise<void> {
  const page = await fetch(loginUrl);
  expect(page.status).toBe(200);
  await page.text();
  const url = new URL(loginUrl);
  const form = new URLSearchParams({
    uuid: url.searchParams.get("uuid") ?? "",
    challenge: url.searchParams.get("challenge") ?? "",
  });
  const approved = await fetch(`${url.origin}/loginDeepControl`, { method: "POST", body: form });
  expect(approved.status).toBe(200);
  await approved.text();
}

describe.skipIf(reason !== undefined)("OpenCode with the cursor-bridge plugin → standalone emulator", () => {
  const emulator = useStandaloneEmulator(API_KEY, "opencode-plugin");
  let env: Record<string, string>;

  beforeAll(async () => {
    const home = emulator.home;
    // The plugin entry comes from `setup opencode-plugin --write`, as docs/clients.md tells users: the global opencode.json.
    const setup = await setupPlugin(home);
    expect(setup.code, setup.stderr).toBe(0);
    const written = JSON.parse(readFileSync(join(home.env.XDG_CONFIG_HOME ?? "", "opencode", "opencode.json"), "utf8"));
    expect(written).toMatchObject({ plugin: [PLUGIN] });
    const settings = openCodeSettings(`cursor/${MAIN_MODEL}`, `cursor/${TITLE_MODEL}`, {
      permission: OPENCODE_PERMISSION,
    });
    env = pluginEnv(home, emulator.url, API_KEY, settings);
  }, 60_000);

  /** Starts OpenCode in the HOME's project folder. */
  function startOpenCode(args: string[]) {
    return startOpenCodeIn(args, { cwd: emulator.home.folder("project"), env });
  }

  it(
    "lists the emulator's models under provider cursor, and leaves no bridge running",
    async () => {
      const result = await startOpenCode(["models", "cursor"]).done;
      const diagnostics = clientDiagnostics(result);
      expect(result.code, diagnostics).toBe(0);
      const listed = result.stdout.split("\n").filter((line) => line.startsWith("cursor/"));
      for (const id of [MAIN_MODEL, TITLE_MODEL, "gpt-5.2", "gemini-3.1-pro", "auto"]) {
        expect(listed, diagnostics).toContain(`cursor/${id}`);
      }
      await expect.poll(() => bridgeChildren(emulator.home.dir), { timeout: CHILD_EXIT_POLL_MS }).toEqual([]);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "offers OpenCode variants only where they choose something: a base's tiers, a flat id's listed tier siblings",
    async () => {
      // Into a file, not a pipe: OpenCode exits without flushing a pipe, and this listing (every model as pretty JSON)
      // is larger than a pipe holds, so a pipe lost its end in some runs (a model missing, a JSON cut short).
      const listing = join(emulator.home.dir, "models-verbose.txt");
      const cwd = emulator.home.folder("project");
      const result = await startClient("/bin/sh", ["-c", 'exec "$0" models cursor --verbose > "$1"', BINARY, listing], {
        cwd,
        env,
        timeoutMs: RUN_TIMEOUT_MS,
      }).done;
      const diagnostics = `exit ${result.code}\nstderr:\n${result.stderr.slice(-4000)}`;
      expect(result.code, diagnostics).toBe(0);
      // `cursor/<id>` then the model as pretty JSON, for each model.
      const variants = new Map<string, string[]>();
      for (const block of readFileSync(listing, "utf8").split(/^(?=cursor\/)/m)) {
        const newline = block.indexOf("\n");
        if (!block.startsWith("cursor/") || newline < 0) continue;
        const model = JSON.parse(block.slice(newline + 1)) as { variants?: Record<string, unknown> };
        variants.set(block.slice("cursor/".length, newline).trim(), Object.keys(model.variants ?? {}).sort());
      }
      const expected: Record<string, string[]> = {
        // A parameterised base: one variant per Cursor effort tier.
        "claude-opus-4-8": ["high", "low", "max", "medium", "xhigh"],
        // Ids with the tier in them: OpenCode's own low/medium/high would change nothing.
        "claude-opus-4-8-thinking-high": [],
        "gpt-5.3-codex-high": [],
        "claude-4.6-opus-high": [],
        // A flat id: exactly the tiers Cursor lists a sibling id for (gpt-5.3-codex-low, -high, -xhigh).
        "gpt-5.3-codex": ["high", "low", "xhigh"],
        // Reasoning, but no tier to choose.
        "composer-2": [],
      };
      for (const [id, names] of Object.entries(expected))
        expect(variants.get(id), `${id}\n${diagnostics}`).toEqual(names);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "--variant picks a Cursor effort tier of a parameterised model, max included",
    async () => {
      for (const [model, variant, expected] of [
        // Without the plugin's variants OpenCode sends its own default effort (medium) for a gpt-5 id.
        ["gpt-5.5", "high", "Model: gpt-5.5; params: fast=false,reasoning=high;"],
        ["claude-opus-4-8", "max", "Model: claude-opus-4-8; params: context=300k,effort=max,thinking=true;"],
      ]) {
        const args = [
          "run",
          "-m",
          `cursor/${model}`,
          "--variant",
          `${variant}`,
          "--format",
          "json",
          "[[emu:echo-model]]",
        ];
        const echo = await startOpenCode(args).done;
        const diagnostics = clientDiagnostics(echo);
        expect(echo.code, diagnostics).toBe(0);
        expect(echo.stdout, diagnostics).toContain(expected);
      }
    },
    2 * RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "runs bash through OpenCode on one Cursor Run, answers with its output, and the bridge exits with OpenCode",
    async () => {
      const nonce = `nonce-${randomBytes(6).toString("hex")}`;
      // Space-free words: `opencode run` quotes arguments containing spaces, which would break the directive's JSON.
      const prompt = `Print the nonce [[emu:tool bash {"command":"echo ${nonce}"}]]`;
      const before = await emulator.stats();
      const run = startOpenCode(["run", "-m", `cursor/${MAIN_MODEL}`, "--format", "json", ...prompt.split(" ")]);
      let seen: number[] = [];
      const watcher = setInterval(() => {
        seen = [...new Set([...seen, ...bridgeChildren(emulator.home.dir)])];
      }, 100);
      const result = await run.done;
      clearInterval(watcher);
      const diagnostics = clientDiagnostics(result);
      expect(result.code, diagnostics).toBe(0);

      const events = openCodeEvents(result.stdout);
      const bash = events.find((e) => e.type === "tool_use" && e.part?.tool === "bash");
      expect(bash?.part?.state?.status, diagnostics).toBe("completed");
      expect(bash?.part?.state?.output).toContain(nonce);
      expect(openCodeText({ events }), diagnostics).toContain(`bash returned: ${nonce}`);
      expect(events.filter((e) => e.type === "step_finish").map((e) => e.part?.reason)).toEqual(["tool-calls", "stop"]);

      const turns = (await emulator.stats()).turns.slice(before.turns.length);
      const mainRuns = turns.filter((t) => t.model === MAIN_MODEL);
      expect(mainRuns, JSON.stringify(turns)).toHaveLength(1);
      expect(mainRuns[0]?.outcome).toBe("completed");

      // One bridge child served this OpenCode process, and it is gone now.
      expect(seen, "the plugin's bridge child was never seen").toHaveLength(1);
      await expect.poll(() => seen.filter(isAlive), { timeout: CHILD_EXIT_POLL_MS }).toEqual([]);

      // The next OpenCode process continues the session from the Cursor checkpoint its (new) bridge child finds on disk.
      const next = await startOpenCode([
        "run",
        "--continue",
        "-m",
        `cursor/${MAIN_MODEL}`,
        "--format",
        "json",
        "[[emu:recall]]",
      ]).done;
      const nextDiagnostics = clientDiagnostics(next);
      expect(next.code, nextDiagnostics).toBe(0);
      const recalled = openCodeText({ events: openCodeEvents(next.stdout) });
      expect(recalled, nextDiagnostics).toContain("First message: Print the nonce");
      const continued = (await emulator.stats()).turns.slice(before.turns.length).filter((t) => t.model === MAIN_MODEL);
      expect(continued, JSON.stringify(continued)).toHaveLength(2);
      expect(continued[1]?.conversationId).toBe(continued[0]?.conversationId);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "a wrong stored API key fails the run with Cursor's reason and what to do, not a bare 'Failed to authorize'",
    async () => {
      const cwd = emulator.home.folder("project");
      const wrong = JSON.stringify({ cursor: { type: "api", key: "e2e-not-a-registered-key" } });
      // Without a working key the plugin lists no models but `auto` (always there).
      const result = await startOpenCodeIn(openCodeRunArgs("cursor/auto", ["Hello"]), {
        cwd,
        env: { ...env, OPENCODE_AUTH_CONTENT: wrong },
      }).done;
      const output = `${result.stdout}\n${result.stderr}`;
      const diagnostics = `exit ${result.code}\n${output.slice(-4000)}`;
      expect(result.code, diagnostics).not.toBe(0);
      expect(output, diagnostics).toContain("Cursor rejected the API key stored for provider cursor");
      expect(output, diagnostics).toContain("opencode auth login");
      expect(output).not.toContain("e2e-not-a-registered-key");
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "without a login the run fails at once saying so and naming `opencode auth login`, and starts no bridge",
    async () => {
      const cwd = emulator.home.folder("project");
      const { OPENCODE_AUTH_CONTENT: _stored, ...withoutAuth } = env;
      const result = await startOpenCodeIn(openCodeRunArgs("cursor/auto", ["Hello"]), {
        cwd,
        env: withoutAuth,
      }).done;
      const output = `${result.stdout}\n${result.stderr}`;
      const diagnostics = `exit ${result.code}\n${output.slice(-4000)}`;
      expect(result.code, diagnostics).not.toBe(0);
      expect(output, diagnostics).toContain("Not logged in to Cursor");
      expect(output, diagnostics).toContain("opencode auth login");
      expect(output, diagnostics).not.toContain("Provider not found");
      expect(bridgeChildren(emulator.home.dir)).toEqual([]);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "the bridge child exits when OpenCode is killed with SIGKILL mid-turn",
    async () => {
      // A turn that streams for a long time keeps OpenCode (and the bridge child) busy until we kill it.
      const run = startOpenCode(["run", "-m", `cursor/${MAIN_MODEL}`, "--format", "json", "[[emu:stall", "1]]"]);
      await expect.poll(() => bridgeChildren(emulator.home.dir).length, { timeout: 60_000, interval: 100 }).toBe(1);
      const [childPid] = bridgeChildren(emulator.home.dir);
      expect(childPid).toBeDefined();
      // Wait until the turn is under way, so the child is mid-request when OpenCode dies.
      await expect
        .poll(
          async () => (await emulator.stats()).turns.some((t) => t.model === MAIN_MODEL && t.outcome === undefined),
          {
            timeout: 60_000,
            interval: 100,
          },
        )
        .toBe(true);
      run.child.kill("SIGKILL");
      const result = await run.done;
      expect(result.signal).toBe("SIGKILL");
      await expect.poll(() => isAlive(childPid as number), { timeout: CHILD_EXIT_POLL_MS, interval: 50 }).toBe(false);
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "the browser login's authorize() runs through OpenCode and the tokens land in OpenCode's auth store",
    async () => {
      // OpenCode's own server drives the plugin's auth method, as `opencode auth login` and the TUI do.
      // A port free a moment ago: `opencode serve --port 0` would pick its default port instead.
      const port = await closedPort();
      const { OPENCODE_AUTH_CONTENT: _stored, ...withoutStoredAuth } = env;
      const serve = spawn(BINARY, ["serve", "--port", String(port), "--hostname", "127.0.0.1"], {
        cwd: join(emulator.home.dir, "project"),
        env: { ...withoutStoredAuth, CURSOR_WEBSITE_URL: emulator.url },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      serve.stdout.setEncoding("utf8").on("data", (part: string) => (output += part));
      serve.stderr.setEncoding("utf8").on("data", (part: string) => (output += part));
      const exited = new Promise<void>((resolve) => serve.once("exit", () => resolve()));
      try {
        await expect.poll(() => output, { timeout: 90_000, interval: 200 }).toContain("listening on");
        const base = `http://127.0.0.1:${port}`;
        const methods = (await (await fetch(`${base}/provider/auth`)).json()) as Record<
          string,
          Array<{ label: string }>
        >;
        const method = (methods.cursor ?? []).findIndex((m) => m.label.startsWith("Log in with Cursor"));
        expect(method, JSON.stringify(methods)).toBeGreaterThanOrEqual(0);

        const post = (path: string) =>
          fetch(`${base}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ method }),
          });
        const authorization = (await (await post("/provider/cursor/oauth/authorize")).json()) as {
          url: string;
          method: string;
        };
        expect(authorization.method).toBe("auto");
        expect(authorization.url.startsWith(`${emulator.url}/loginDeepControl?`)).toBe(true);
        await approveInBrowser(authorization.url);
        const callback = await post("/provider/cursor/oauth/callback");
        expect(callback.status, await callback.clone().text()).toBe(200);
        expect(await callback.json()).toBe(true);

        const stored = JSON.parse(
          readFileSync(join(emulator.home.env.XDG_DATA_HOME ?? "", "opencode", "auth.json"), "utf8"),
        ) as {
          cursor?: { type: string; access: string; refresh: string; expires: number };
        };
        expect(stored.cursor?.type).toBe("oauth");
        expect(stored.cursor?.expires).toBeGreaterThan(Date.now());
        // The stored refresh token is a live Cursor browser session: the emulator refreshes it through
        // /oauth/token, as Cursor does for browser logins (docs/protocol.md §3).
        const refreshed = await fetch(`${emulator.url}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            grant_type: "refresh_token",
            client_id: CURSOR_OAUTH_CLIENT_ID,
            refresh_token: stored.cursor?.refresh,
          }),
        });
        expect(refreshed.status, await refreshed.clone().text()).toBe(200);
        const answer = (await refreshed.json()) as { access_token?: string; shouldLogout?: boolean };
        expect(answer.shouldLogout).toBe(false);
        expect(answer.access_token).toBeTruthy();
      } finally {
        serve.kill("SIGTERM");
        await exited;
      }
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
