import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientRun, closedPort, runClient } from "./support/client-process.js";
import { createTempHome, type ServedBridge, startServedBridge, type TempHome } from "./support/served-bridge.js";
import { clientBin, ensureTestClients, OPENCODE_BINARY, OPENCODE_OFFLINE_ENV } from "./support/test-clients.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const OPENCODE = OPENCODE_BINARY;
const KEY = "e2e-setup-key-5c1d";
const RUN_TIMEOUT_MS = 150_000;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the setup end-to-end tests: ${reason}`);
const openCodeReason =
  process.platform === "linux" && process.arch === "x64"
    ? undefined
    : `OpenCode's pinned binary is linux-x64 only (this is ${process.platform}-${process.arch})`;
if (openCodeReason !== undefined) console.log(`skipping the OpenCode setup test: ${openCodeReason}`);

const run = (command: string, args: string[], env: Record<string, string>, cwd: string): Promise<ClientRun> =>
  runClient(command, args, { cwd, env, timeoutMs: RUN_TIMEOUT_MS });

const diagnostics = (result: ClientRun) =>
  `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr.slice(-4000)}`;

describe.skipIf(reason !== undefined)("setup → real clients → cursor-bridge serve (with a local API key)", () => {
  let served: ServedBridge;
  let home: TempHome;
  let env: Record<string, string>;
  let port: string;

  const setup = (args: string[], extra: Record<string, string> = {}) =>
    run(process.execPath, [BIN, "setup", ...args, "--port", port], { ...env, ...extra }, home.dir);

  beforeAll(async () => {
    served = await startServedBridge({}, { CURSOR_BRIDGE_API_KEY: KEY });
    home = createTempHome("setup");
    port = new URL(served.baseURL).port;
    env = { ...home.env, CURSOR_BRIDGE_API_KEY: KEY, NO_COLOR: "1" };
  });
  afterAll(async () => {
    await served?.close();
    home?.remove();
  });

  it(
    "codex: the merged config.toml is all codex exec needs",
    async () => {
      const codexHome = join(home.dir, "codex-home");
      mkdirSync(codexHome, { recursive: true });
      const configFile = join(codexHome, "config.toml");
      writeFileSync(configFile, '# mine\napproval_policy = "never"\n\n[analytics]\nenabled = false\n');
      const written = await setup(["codex", "--write"], { CODEX_HOME: codexHome });
      expect(written.code, diagnostics(written)).toBe(0);
      const config = readFileSync(configFile, "utf8");
      expect(config).toContain('# mine\napproval_policy = "never"\nmodel = "auto"\nmodel_provider = "cursor-bridge"\n');
      expect(config).not.toContain(KEY);

      const cwd = join(home.dir, "codex-work");
      mkdirSync(cwd, { recursive: true });
      const tmp = join(home.dir, "codex-tmp");
      mkdirSync(tmp, { recursive: true });
      const args = ["exec", "--skip-git-repo-check", "--ephemeral", "--json", "--disable", "plugins"];
      args.push("--disable", "unbounded_connection_retries", "-c", "check_for_update_on_startup=false");
      const result = await run(
        clientBin("codex"),
        [...args, "Hello from a written config"],
        { ...env, CODEX_HOME: codexHome, TMPDIR: tmp },
        cwd,
      );
      expect(result.code, diagnostics(result)).toBe(0);
      expect(result.stdout, diagnostics(result)).toContain('"text":"You said: Hello from a written config"');
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it.skipIf(openCodeReason !== undefined)(
    "opencode: the merged global opencode.json is all opencode run needs",
    async () => {
      const configFile = join(home.env.XDG_CONFIG_HOME ?? "", "opencode", "opencode.json");
      mkdirSync(join(configFile, ".."), { recursive: true });
      writeFileSync(configFile, JSON.stringify({ autoupdate: false, share: "disabled" }, null, 2));
      const written = await setup(["opencode", "--write"]);
      expect(written.code, diagnostics(written)).toBe(0);
      const config = JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>;
      expect(config).toMatchObject({
        autoupdate: false,
        share: "disabled",
        model: "cursor-bridge/auto",
        small_model: "cursor-bridge/composer-1",
      });
      expect(JSON.stringify(config)).not.toContain(KEY);
      // One entry per model: no `default` beside `auto`, no alias beside its target.
      const models = Object.keys(
        (config.provider as Record<string, { models: Record<string, unknown> }>)["cursor-bridge"]?.models ?? {},
      );
      expect(models).toContain("auto");
      expect(models).not.toContain("default");
      expect(models).not.toContain("sonnet-4.5");
      served.emulator.resetStats();

      const cwd = join(home.dir, "opencode-work");
      mkdirSync(cwd, { recursive: true });
      const result = await run(
        OPENCODE,
        ["run", "--format", "json", "Hello", "from", "opencode.json"],
        {
          ...env,
          ...OPENCODE_OFFLINE_ENV,
          npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
        },
        cwd,
      );
      expect(result.code, diagnostics(result)).toBe(0);
      expect(result.stdout, diagnostics(result)).toContain('"text":"You said: Hello from opencode.json"');
      // The session title came from the fast small_model, the answer from the selected model.
      const turnModels = served.emulator.stats().turns.map((turn) => turn.model);
      expect(turnModels, JSON.stringify(turnModels)).toContain("composer-1");
      expect(turnModels).toContain("default");

      // A parameterised model gets OpenCode variants, one per effort tier, and `--variant` reaches Cursor.
      const provider = (config.provider as Record<string, { models: Record<string, { variants?: unknown }> }>)[
        "cursor-bridge"
      ];
      expect(provider?.models["gpt-5.5"]?.variants).toMatchObject({ high: { reasoningEffort: "high" } });
      const variant = await run(
        OPENCODE,
        ["run", "--format", "json", "-m", "cursor-bridge/gpt-5.5", "--variant", "high", "[[emu:echo-model]]"],
        {
          ...env,
          ...OPENCODE_OFFLINE_ENV,
          npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
        },
        cwd,
      );
      expect(variant.code, diagnostics(variant)).toBe(0);
      expect(variant.stdout, diagnostics(variant)).toContain(
        "Model: gpt-5.5; params: fast=false,reasoning=high; max_mode: false; model_details: none",
      );

      // Cursor's top tier `max` is a variant too where the model has it, and reaches Cursor as written.
      expect(provider?.models["claude-opus-4-8"]?.variants).toMatchObject({ max: { reasoningEffort: "max" } });
      expect(provider?.models["gpt-5.5"]?.variants).not.toHaveProperty("max");
      const max = await run(
        OPENCODE,
        ["run", "--format", "json", "-m", "cursor-bridge/claude-opus-4-8", "--variant", "max", "[[emu:echo-model]]"],
        {
          ...env,
          ...OPENCODE_OFFLINE_ENV,
          npm_config_registry: `http://127.0.0.1:${await closedPort()}`,
        },
        cwd,
      );
      expect(max.code, diagnostics(max)).toBe(0);
      expect(max.stdout, diagnostics(max)).toContain(
        "Model: claude-opus-4-8; params: context=300k,effort=max,thinking=true; max_mode: false; model_details: none",
      );
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    "claude-code: the printed shell lines are all claude needs",
    async () => {
      const printed = await setup(["claude-code"]);
      expect(printed.code, diagnostics(printed)).toBe(0);
      expect(printed.stdout).not.toContain(KEY);
      const cwd = join(home.dir, "claude-work");
      mkdirSync(cwd, { recursive: true });
      const claude = `'${clientBin("claude")}' -p 'Hello from the printed lines' --output-format stream-json --verbose --max-turns 2`;
      const result = await run(
        "sh",
        ["-c", `${printed.stdout}\nexec ${claude}`],
        { ...env, CLAUDE_CODE_MAX_RETRIES: "0" },
        cwd,
      );
      expect(result.code, diagnostics(result)).toBe(0);
      const last = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as { subtype?: string; result?: string };
      expect(last.subtype, diagnostics(result)).toBe("success");
      expect(last.result).toContain("Hello from the printed lines");
      expect(last.result).toMatch(/^You said:/);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
