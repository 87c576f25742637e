/**
 * The messages a new user meets first (issue 16): hints name a command that works for how the tool was launched,
 * `doctor` recognises a running cursor-bridge on its port, `status` says "reachable", `models` and `usage` show
 * the emulator before a login, `--json` prints JSON on stdout even for errors, and `--help` fits the terminal.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { startBridge } from "../../src/cli/serve.js";
import { packageVersion } from "../../src/cli/version.js";
import { type CliHarness, createCliHarness, issueTokens, writeStoredCredentials } from "./harness.js";

const FROM_CLONE = { npm_package_name: "cursor-bridge", npm_lifecycle_script: "node bin/cursor-bridge.js" };
const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

let harness: CliHarness;
beforeEach(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await harness.close();
});

const logIn = () => writeStoredCredentials(harness, { ...issueTokens(harness, { email: "ada@example.com" }) });

describe("hints name a command that works for how the tool was launched", () => {
  it("says `npm run --silent cli -- login` from a clone (npm run) and `cursor-bridge login` when installed", async () => {
    const cloned = await harness.run(["status"], { env: FROM_CLONE });
    expect(cloned.code).toBe(3);
    expect(cloned.out).toContain("Run `npm run --silent cli -- login` (or `npm run --silent cli -- import`)");
    expect(cloned.out).not.toContain("`cursor-bridge");
    const installed = await harness.run(["status"]);
    expect(installed.out).toContain("Run `cursor-bridge login` (or `cursor-bridge import`)");

    const doctor = await harness.run(["doctor", "--json"], { env: FROM_CLONE });
    const checks = (JSON.parse(doctor.out) as { checks: { id: string; fix?: string }[] }).checks;
    expect(checks.find((check) => check.id === "credentials")?.fix).toContain("`npm run --silent cli -- login`");

    const refused = await harness.run(["models", "--upstream", "cursor"], { env: FROM_CLONE });
    expect(refused.err).toContain("Run `npm run --silent cli -- login` first");
  });

  it("the banner of `npm start` (a real process) names `npm run --silent cli -- login`", async () => {
    const home = mkdtempSync(join(tmpdir(), "cursor-bridge-hint-"));
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], {
      env: {
        ...process.env,
        ...FROM_CLONE,
        npm_lifecycle_script: "node bin/cursor-bridge.js serve",
        HOME: home,
        XDG_CONFIG_HOME: join(home, "c"),
        XDG_DATA_HOME: join(home, "d"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (part: Buffer) => (out += part.toString()));
    try {
      await expect.poll(() => out, { timeout: 20_000 }).toContain("Status page:");
      expect(out).toContain("!! Run `npm run --silent cli -- login`, then restart");
      // The rule for keys follows once the stores have said that no virtual key exists.
      await expect.poll(() => out, { timeout: 20_000 }).toContain("No API key required");
      expect(out).toMatch(
        /Status page: http:\/\/127\.0\.0\.1:\d+\/ · client configs: `npm run --silent cli -- setup <client>`/,
      );
      // The port opens only when the API serves: the first /health is 200 and the API answers at once.
      const base = /listening on (http:\/\/\S+)\/v1/.exec(out)?.[1];
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect((await fetch(`${base}/v1/models`)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  });
});

describe("doctor and status", () => {
  it("doctor reports a port served by a running cursor-bridge as ok, with its version", async () => {
    const io: CliIo = { out: () => {}, err: () => {}, isTty: false, env: harness.env };
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
    try {
      const port = new URL(bridge.server.url).port;
      const result = await harness.run(["doctor", "--port", port]);
      expect(result.out).toMatch(
        new RegExp(`\\[ ok \\] Port\\s+127\\.0\\.0\\.1:${port} is served by cursor-bridge ${packageVersion()}\\n`),
      );
    } finally {
      await bridge.close();
    }
  });

  it("status right after login says the upstream is reachable, without Cursor's expected 401", async () => {
    logIn();
    const result = await harness.run(["status"]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Upstream\s+\S+ — reachable over HTTP\/2\n/);
    expect(result.out).not.toContain("HTTP 401");
  });
});

describe("models and usage before a login show what the server would serve", () => {
  it("models lists the emulator's models, labelled", async () => {
    const result = await harness.run(["models"]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^Not logged in: the built-in Cursor emulator's models/);
    expect(result.out).toMatch(/^default\s+Auto\s.*\bauto$/m);
    const json = JSON.parse((await harness.run(["models", "--json"])).out) as { upstream: string; models: unknown[] };
    expect(json.upstream).toBe("emulator");
    expect(json.models.length).toBeGreaterThan(0);
    logIn();
    expect(JSON.parse((await harness.run(["models", "--json"])).out)).toMatchObject({ upstream: "cursor" });
  });

  it("usage shows the emulator's scripted usage, labelled", async () => {
    const result = await harness.run(["usage"]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^Not logged in: the built-in Cursor emulator's usage \(scripted\)/);
    expect(result.out).toMatch(/^Plan usage: /m);
    expect(JSON.parse((await harness.run(["usage", "--json"])).out)).toMatchObject({ upstream: "emulator" });
  });
});

describe("--json", () => {
  it("prints errors as JSON on stdout with the exit code", async () => {
    const refused = await harness.run(["models", "--json", "--upstream", "cursor"]);
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.out)).toEqual({
      error: { code: "unauthenticated", message: expect.stringContaining("cursor-bridge login"), exitCode: 3 },
    });
    const badOption = await harness.run(["status", "--json", "--no-such-option"]);
    expect(badOption.code).toBe(2);
    expect(JSON.parse(badOption.out)).toMatchObject({ error: { code: "invalid_request", exitCode: 2 } });
    const notLoggedIn = await harness.run(["status", "--json"]);
    expect(notLoggedIn.code).toBe(3);
    expect(JSON.parse(notLoggedIn.out)).toMatchObject({ loggedIn: false });
    const unknown = await harness.run(["frobnicate", "--json"]);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.out)).toMatchObject({ error: { code: "usage", exitCode: 2 } });
  });
});

describe("--help", () => {
  const helpOf = async (argv: string[], columns?: number) => {
    let out = "";
    const io: CliIo = { out: (text) => (out += text), err: () => {}, isTty: columns !== undefined, columns, env: {} };
    expect(await main(argv, io)).toBe(0);
    return out;
  };
  const commands = ["serve", "emulator", "login", "logout", "import", "status", "models", "usage", "doctor"];

  it("wraps to 80 columns when not a terminal and to the terminal's width on one", async () => {
    for (const argv of [["--help"], ...commands.map((name) => [name, "--help"])]) {
      const plain = await helpOf(argv);
      for (const line of plain.split("\n")) expect(line.length, `${argv[0]}: ${line}`).toBeLessThanOrEqual(80);
      const narrow = await helpOf(argv, 72);
      for (const line of narrow.split("\n")) expect(line.length, `${argv[0]}: ${line}`).toBeLessThanOrEqual(72);
      // Nothing is lost: the same words (examples gain shell continuations, comments move above their command).
      const words = (text: string) =>
        text
          .split(/\s+/)
          .filter((word) => word !== "\\")
          .sort();
      expect(words(narrow)).toEqual(words(plain));
    }
    const wide = await helpOf(["serve", "--help"], 200);
    expect(wide.split("\n").some((line) => line.length > 80)).toBe(true);
  });
});
