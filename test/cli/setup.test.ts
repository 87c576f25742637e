/**
 * `cursor-bridge setup <client>` through the CLI entry: what it prints for every client (with and without a running
 * server, with and without a local API key), and `--write` merging into existing OpenCode and Codex config files with
 * a backup and a diff. The printed curl command and SDK environment are run for real against a served bridge; the
 * real OpenCode, Codex and Claude Code runs on written configs are in test/e2e/setup.test.ts.
 */
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type CliHarness, createCliHarness } from "./harness.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The plugin entry `setup opencode-plugin` writes: this checkout's root as a file URL. */
const ROOT_URL = new URL("../../", import.meta.url).href.replace(/\/$/, "");
const KEY = "setup-test-local-key-9f3a";

let harness: CliHarness;
let bridge: RunningBridge;
let keyed: RunningBridge;
let port: string;
let keyedPort: string;
let closedPort: string;

async function serve(args: string[]): Promise<RunningBridge> {
  const io: CliIo = { out: () => {}, err: () => {}, isTty: false, env: harness.env };
  return (await startBridge(io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent", ...args])).bridge;
}

async function freePort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return String(address.port);
}

beforeAll(async () => {
  harness = await createCliHarness();
  harness.secrets.add(KEY);
  bridge = await serve([]);
  // One serve per data directory: the keyed one has its own.
  keyed = await serve(["--api-key", KEY, "--data-dir", join(harness.home, "keyed-data")]);
  port = new URL(bridge.server.url).port;
  keyedPort = new URL(keyed.server.url).port;
  closedPort = await freePort();
});
afterAll(async () => {
  await bridge?.close();
  await keyed?.close();
  await harness?.close();
});

/**
 * Runs a shell snippet with only PATH and the harness HOME (async: the bridge answering it runs in this process). It
 * runs in test/, whose test-only package holds the SDKs a snippet imports.
 */
function sh(script: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script], {
      cwd: join(ROOT, "test"),
      env: { PATH: process.env.PATH, HOME: harness.home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (stdout += part));
    child.stderr.setEncoding("utf8").on("data", (part: string) => (stderr += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe("setup: printing", () => {
  it("prints every client's configuration for the server serve would run, without a running server", async () => {
    const opts = ["--port", closedPort];
    const opencode = await harness.run(["setup", "opencode", ...opts]);
    expect(opencode.code).toBe(0);
    const json = JSON.parse(opencode.out.slice(opencode.out.indexOf("{"))) as {
      provider: Record<string, { options: { baseURL: string; apiKey: string }; models: Record<string, unknown> }>;
      model: string;
    };
    expect(json.provider["cursor-bridge"]?.options).toEqual({
      baseURL: `http://127.0.0.1:${closedPort}/v1`,
      apiKey: "local",
    });
    expect(Object.keys(json.provider["cursor-bridge"]?.models ?? {})).toEqual(["auto"]);
    expect(json.model).toBe("cursor-bridge/auto");

    const plugin = await harness.run(["setup", "opencode-plugin", ...opts]);
    // This installation's absolute path: the bare name "cursor-bridge" is no published package.
    expect(JSON.parse(plugin.out.slice(plugin.out.indexOf("{")))).toMatchObject({ plugin: [ROOT_URL] });

    const claude = await harness.run(["setup", "claude-code", ...opts]);
    expect(claude.out).toContain(`export ANTHROPIC_BASE_URL=http://127.0.0.1:${closedPort}\n`);
    expect(claude.out).toContain("export ANTHROPIC_AUTH_TOKEN=local\n");
    expect(claude.out).toContain("export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\n");

    const codex = await harness.run(["setup", "codex", ...opts]);
    expect(codex.out).toContain(
      `[model_providers.cursor-bridge]\nname = "cursor-bridge"\nbase_url = "http://127.0.0.1:${closedPort}/v1"\n` +
        'env_key = "CURSOR_BRIDGE_API_KEY"\nwire_api = "responses"\n',
    );
    expect(codex.out).toMatch(/^model = "auto"\nmodel_provider = "cursor-bridge"$/m);

    const openai = await harness.run(["setup", "openai", ...opts]);
    expect(openai.out).toContain(`export OPENAI_BASE_URL=http://127.0.0.1:${closedPort}/v1\n`);
    const curl = await harness.run(["setup", "curl", ...opts]);
    expect(curl.out).toContain(`curl -sSN http://127.0.0.1:${closedPort}/v1/chat/completions`);
  });

  it("uses the address from the environment and config file, and loopback for a wildcard bind address", async () => {
    const configFile = join(harness.home, "bridge-config.json");
    writeFileSync(configFile, JSON.stringify({ port: Number(closedPort) }));
    // The environment wins over the file (as for serve): the harness sets CURSOR_BRIDGE_PORT=0.
    const fromFile = await harness.run(["setup", "claude-code", "--config", configFile], {
      env: { CURSOR_BRIDGE_PORT: undefined },
    });
    expect(fromFile.out).toContain(`ANTHROPIC_BASE_URL=http://127.0.0.1:${closedPort}\n`);
    const wildcard = await harness.run(["setup", "curl"], {
      env: { CURSOR_BRIDGE_HOST: "0.0.0.0", CURSOR_BRIDGE_PORT: closedPort, CURSOR_BRIDGE_API_KEY: "k-wild" },
    });
    expect(wildcard.out).toContain(`http://127.0.0.1:${closedPort}/v1/chat/completions`);
    const ipv6 = await harness.run(["setup", "openai", "--host", "::1", "--port", closedPort]);
    expect(ipv6.out).toContain(`OPENAI_BASE_URL=http://[::1]:${closedPort}/v1`);
  });

  it("lists the running server's models and checks --model against them", async () => {
    const result = await harness.run(["setup", "opencode", "--port", port, "--model", "composer-1"]);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.out.slice(result.out.indexOf("{"))) as {
      provider: Record<string, { models: Record<string, { name: string; reasoning?: boolean }> }>;
      model: string;
    };
    const models = json.provider["cursor-bridge"]?.models ?? {};
    expect(models["composer-1"]?.name).toBe("Composer 1");
    expect(models["composer-1.5"]?.reasoning).toBe(true);
    expect(Object.keys(models)).toContain("auto");
    expect(json.model).toBe("cursor-bridge/composer-1");
    // One entry per model: aliases (default = auto, sonnet-4.5 = claude-4.5-sonnet) are folded in.
    expect(Object.keys(models)).not.toContain("default");
    expect(Object.keys(models)).toContain("claude-4.5-sonnet");
    expect(Object.keys(models)).not.toContain("sonnet-4.5");
    const names = Object.values(models).map((model) => model.name);
    expect(names.length).toBe(new Set(names).size);
    // A fast model names the sessions.
    expect((json as { small_model?: string }).small_model).toBe("cursor-bridge/composer-1");

    const unknown = await harness.run(["setup", "codex", "--port", port, "--model", "gpt-9-imaginary"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /does not list the model `gpt-9-imaginary`\. It lists: default, auto?|It lists: .*composer-1/,
    );
    const jsonOut = await harness.run(["setup", "curl", "--port", port, "--json"]);
    expect(JSON.parse(jsonOut.out)).toMatchObject({
      client: "curl",
      model: "auto",
      origin: `http://127.0.0.1:${port}`,
    });
  });

  it("reads the key from CURSOR_BRIDGE_API_KEY when the server has one, and never prints it", async () => {
    const env = { CURSOR_BRIDGE_API_KEY: KEY, CURSOR_BRIDGE_PORT: keyedPort };
    const opencode = await harness.run(["setup", "opencode"], { env });
    expect(opencode.out).toContain('"apiKey": "{env:CURSOR_BRIDGE_API_KEY}"');
    // The key let it list the keyed server's models.
    expect(opencode.out).toContain('"composer-1"');
    const claude = await harness.run(["setup", "claude-code"], { env });
    expect(claude.out).toContain('export ANTHROPIC_AUTH_TOKEN="$CURSOR_BRIDGE_API_KEY"\n');
    const curl = await harness.run(["setup", "curl"], { env });
    expect(curl.out).toContain('-H "authorization: Bearer $CURSOR_BRIDGE_API_KEY"');
    // harness.run asserts that KEY appears in no output.
    const unset = await harness.run(["setup", "opencode", "--port", keyedPort]);
    expect(unset.code).toBe(0);
    expect(unset.err).toContain("requires its API key (set CURSOR_BRIDGE_API_KEY to list its models)");
    expect(unset.out).toContain('"apiKey": "{env:CURSOR_BRIDGE_API_KEY}"');
  });

  it("rejects a missing or unknown client, port 0, and --write for clients without a file", async () => {
    const none = await harness.run(["setup"]);
    expect(none.code).toBe(2);
    expect(none.err).toContain(
      "one of opencode, opencode-plugin, claude-code, codex, openai, curl, zed, jetbrains, neovim",
    );
    expect((await harness.run(["setup", "vim"])).err).toContain("Unknown client `vim`");
    const pasted = await harness.run(["setup", "sk-Secret123XYZ"]);
    expect(pasted.code).toBe(2);
    expect(pasted.err).toContain("Unknown client (the argument is not shown)");
    expect(pasted.err).not.toContain("sk-Secret123XYZ");
    // The client may come after options.
    expect((await harness.run(["setup", "--port", closedPort, "curl"])).code).toBe(0);
    expect((await harness.run(["setup", "curl"])).err).toContain("pass --port");
    const write = await harness.run(["setup", "claude-code", "--write", "--port", closedPort]);
    expect(write.code).toBe(2);
    expect(write.err).toContain("environment variables or a command line, not a file");
    const help = await harness.run(["setup", "codex", "--help"]);
    expect(help.out).toContain("Usage: cursor-bridge setup <client>");
  });
});

describe("setup: the printed configuration works", () => {
  it("curl: the printed command streams an answer", async () => {
    const printed = (await harness.run(["setup", "curl", "--port", port])).out;
    const result = await sh(printed);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("data: [DONE]");
    const text = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices)
      .map((choices) => choices[0]?.delta.content ?? "")
      .join("");
    expect(text).toBe("You said: Hello");
    const withKey = (
      await harness.run(["setup", "curl"], { env: { CURSOR_BRIDGE_API_KEY: KEY, CURSOR_BRIDGE_PORT: keyedPort } })
    ).out;
    const keyedRun = await sh(`CURSOR_BRIDGE_API_KEY=${KEY}\n${withKey}`);
    expect(keyedRun.stdout).toContain("data: [DONE]");
  });

  it("openai: the OpenAI and Anthropic SDKs work with only the printed environment", async () => {
    const printed = (await harness.run(["setup", "openai", "--port", port])).out;
    const script = `
      import OpenAI from "openai";
      import Anthropic from "@anthropic-ai/sdk";
      const chat = await new OpenAI({ maxRetries: 0 }).chat.completions.create({ model: "auto", messages: [{ role: "user", content: "via env" }] });
      const message = await new Anthropic({ maxRetries: 0 }).messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "via env too" }] });
      console.log(JSON.stringify([chat.choices[0].message.content, message.content[0].text]));`;
    const result = await sh(`${printed}\nexec node --input-type=module -e '${script.replaceAll("'", "'\\''")}'`);
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(["You said: via env", "You said: via env too"]);
  });
});

describe("setup --write", () => {
  it("merges into an existing opencode.json at $OPENCODE_CONFIG, with a backup and a diff", async () => {
    const dir = join(harness.home, "oc-explicit");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "custom.json");
    const before = {
      theme: "tokyonight",
      model: "anthropic/claude-sonnet-4-5",
      provider: { anthropic: { options: { timeout: 1000 } } },
      mcp: { docs: { type: "local", command: ["docs"] } },
    };
    writeFileSync(file, `${JSON.stringify(before, null, 2)}\n`);
    const result = await harness.run(["setup", "opencode", "--write", "--port", port], {
      env: { OPENCODE_CONFIG: file },
    });
    expect(result.code, result.err).toBe(0);
    const after = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown> & {
      provider: Record<string, { options: { baseURL: string } }>;
    };
    expect(after).toMatchObject({ theme: "tokyonight", mcp: before.mcp, model: before.model });
    expect(after.provider.anthropic).toEqual(before.provider.anthropic);
    expect(after.provider["cursor-bridge"]?.options.baseURL).toBe(`http://127.0.0.1:${port}/v1`);
    const backups = readdirSync(dir).filter((name) => /^custom\.json\.cursor-bridge-\d{8}-\d{6}\.bak$/.test(name));
    expect(backups).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, backups[0] ?? ""), "utf8"))).toEqual(before);
    expect(result.out).toContain(`--- ${file}`);
    expect(result.out).toMatch(/^\+ {4}"cursor-bridge": \{$/m);
    expect(result.out).toContain("previous version is in");

    const again = await harness.run(["setup", "opencode", "--write", "--port", port], {
      env: { OPENCODE_CONFIG: file },
    });
    expect(again.out).toContain("already has this configuration; nothing changed");
    expect(readdirSync(dir).filter((name) => name.endsWith(".bak"))).toHaveLength(1);

    const plugin = await harness.run(["setup", "opencode-plugin", "--write"], {
      env: { OPENCODE_CONFIG: file, CURSOR_BRIDGE_PORT: port },
    });
    expect(plugin.code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ plugin: [ROOT_URL], theme: "tokyonight" });
    expect(plugin.out).toContain(`The entry is this installation (${ROOT_URL})`);
    // An older setup's bare "cursor-bridge" entry is replaced, other plugins kept.
    const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...config, plugin: ["cursor-bridge", "other-plugin", ROOT_URL] }));
    const replaced = await harness.run(["setup", "opencode-plugin", "--write"], {
      env: { OPENCODE_CONFIG: file, CURSOR_BRIDGE_PORT: port },
    });
    expect(replaced.code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ plugin: ["other-plugin", ROOT_URL] });
  });

  it("creates the global opencode.json under XDG_CONFIG_HOME and selects its model when none is set", async () => {
    const xdg = join(harness.home, "xdg-fresh");
    const result = await harness.run(["setup", "opencode", "--write", "--port", port], {
      env: { XDG_CONFIG_HOME: xdg },
    });
    expect(result.code, result.err).toBe(0);
    const file = join(xdg, "opencode", "opencode.json");
    expect(result.out).toContain(`Created ${file}.`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ model: "cursor-bridge/auto" });
  });

  it("writes through a symlinked config file, keeping the link", async () => {
    const dir = join(harness.home, "dotfiles");
    mkdirSync(dir, { recursive: true });
    const target = join(dir, "opencode.json");
    writeFileSync(target, '{ "theme": "x" }\n');
    const link = join(harness.home, "linked-opencode.json");
    symlinkSync(target, link);
    const result = await harness.run(["setup", "opencode", "--write", "--file", link, "--port", port]);
    expect(result.code, result.err).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, "utf8"))).toMatchObject({ theme: "x", model: "cursor-bridge/auto" });
    expect(readdirSync(dir).filter((name) => name.endsWith(".bak"))).toHaveLength(1);
  });

  it("leaves a JSONC file alone and says so", async () => {
    const file = join(harness.home, "commented.json");
    const text = '{\n  // my theme\n  "theme": "x",\n}\n';
    writeFileSync(file, text);
    const result = await harness.run(["setup", "opencode", "--write", "--file", file, "--port", port]);
    expect(result.code).toBe(1);
    expect(result.err).toContain("has comments or trailing commas (JSONC)");
    expect(result.out).toContain('"cursor-bridge"');
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(existsSync(`${file}.bak`)).toBe(false);
    expect(readdirSync(harness.home).filter((name) => name.startsWith("commented.json."))).toEqual([]);
  });

  it("merges into $CODEX_HOME/config.toml, keeping another default provider", async () => {
    const codexHome = join(harness.home, "codex-home");
    mkdirSync(codexHome, { recursive: true });
    const file = join(codexHome, "config.toml");
    const before = `model = "o3"\nmodel_provider = "azure"\n\n[model_providers.azure]\nname = "Azure"\nbase_url = "https://x.openai.azure.com/openai"\n`;
    writeFileSync(file, before);
    const result = await harness.run(["setup", "codex", "--write", "--port", port], { env: { CODEX_HOME: codexHome } });
    expect(result.code, result.err).toBe(0);
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(after).toContain(
      `[model_providers.cursor-bridge]\nname = "cursor-bridge"\nbase_url = "http://127.0.0.1:${port}/v1"`,
    );
    expect(after).toContain('wire_api = "responses"\n');
    expect(after).not.toContain("[profiles");
    expect(result.out).toContain(
      "`codex -c model_provider=cursor-bridge -m auto` (your default provider is left as it was)",
    );
    expect(readdirSync(codexHome).filter((name) => name.endsWith(".bak"))).toHaveLength(1);

    const fresh = join(harness.home, "codex-fresh", "config.toml");
    const created = await harness.run(["setup", "codex", "--write", "--file", fresh, "--port", port]);
    expect(created.code, created.err).toBe(0);
    expect(readFileSync(fresh, "utf8")).toMatch(/^model = "auto"\nmodel_provider = "cursor-bridge"\n\n# Added by/);
  });

  it("refuses a config.toml that defines its provider inline, leaving it untouched", async () => {
    const file = join(harness.home, "inline.toml");
    const text = 'model_providers = { cursor-bridge = { name = "mine" } }\n';
    writeFileSync(file, text);
    const result = await harness.run(["setup", "codex", "--write", "--file", file, "--port", port]);
    expect(result.code).toBe(1);
    expect(result.err).toContain("line 1 defines model_providers as a key");
    expect(readFileSync(file, "utf8")).toBe(text);
  });
});
