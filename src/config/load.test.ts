import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { loadConfig, loadConfigFromSources, resolveConfigFilePath } from "./load.js";
import { describeConfig, SETTINGS, settingForFlag } from "./settings.js";

const base = { platform: "linux" as const, homedir: "/home/ana" };

function configError(run: () => unknown): ProxyError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProxyError);
    return error as ProxyError;
  }
  throw new Error("expected loadConfig to throw");
}

describe("loadConfig", () => {
  it("returns documented defaults, deeply frozen", () => {
    const config = loadConfig({ ...base, env: {} });
    expect(config).toEqual({
      host: "127.0.0.1",
      port: 8765,
      apiKey: undefined,
      adminKey: undefined,
      upstream: "auto",
      cursorApiUrl: "https://api2.cursor.sh",
      cursorAgentUrl: "https://api2.cursor.sh",
      cursorWebsiteUrl: "https://cursor.com",
      clientVersion: undefined,
      transport: "auto",
      upstreamStreamsPerConnection: 100,
      reasoningOutput: "reasoning_content",
      maxBodyBytes: 4 * 1024 * 1024,
      maxImageBytes: 15 * 1024 * 1024,
      parkedTurnTtlMs: 15 * 60_000,
      stallTimeoutMs: 60_000,
      logLevel: "info",
      logFormat: "text",
      corsOrigins: [],
      cursorTools: "client",
      allowedHosts: [],
      allowedOrigins: [],
      bodyTimeoutMs: 30_000,
      drainTimeoutMs: 7_000,
      visionModels: [],
      anthropicModels: [],
      modelAliases: [],
      dataDir: "/home/ana/.local/share/cursor-bridge",
      maxParkedTurns: 5000,
      maxConversations: 10_000,
      maxConversationBytes: 1024 * 1024 * 1024,
      configDir: "/home/ana/.config/cursor-bridge",
      cursorAccessToken: undefined,
      cursorApiKey: undefined,
      store: "file",
      instanceUrl: undefined,
      clusterSecret: undefined,
      prices: {},
      budgetWarnPercent: 80,
      emulator: { bootstrapLatencyMs: 0, tokensPerSecond: 0, port: 0 },
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.emulator)).toBe(true);
    expect(Object.isFrozen(config.corsOrigins)).toBe(true);
  });

  it("applies flags > env > file > defaults", () => {
    const file = {
      path: "/etc/cb.json",
      data: { port: 1000, host: "localhost", logLevel: "warn", emulator: { tokensPerSecond: 50 } },
    };
    const env = {
      CURSOR_BRIDGE_PORT: "2000",
      CURSOR_BRIDGE_HOST: "::1",
      CURSOR_BRIDGE_EMULATOR_BOOTSTRAP_LATENCY_MS: "7",
    };
    const config = loadConfig({ ...base, env, file, flags: { port: "3000" } });
    expect(config.port).toBe(3000);
    expect(config.host).toBe("::1");
    expect(config.logLevel).toBe("warn");
    expect(config.emulator).toEqual({ bootstrapLatencyMs: 7, tokensPerSecond: 50, port: 0 });
    expect(loadConfig({ ...base, env, file }).port).toBe(2000);
    expect(loadConfig({ ...base, env: {}, file }).port).toBe(1000);
  });

  it("coerces env strings, lists and derived defaults", () => {
    const config = loadConfig({
      ...base,
      env: {
        CURSOR_API_URL: "http://127.0.0.1:9000",
        CURSOR_BRIDGE_CORS_ORIGINS: "http://localhost:3000, https://app.example.com,",
        CURSOR_BRIDGE_EMULATOR_TOKENS_PER_SECOND: "12.5",
        CURSOR_BRIDGE_PORT: "",
        CURSOR_ACCESS_TOKEN: "env-token",
        XDG_DATA_HOME: "/data",
      },
    });
    expect(config.cursorAgentUrl).toBe("http://127.0.0.1:9000");
    expect(config.corsOrigins).toEqual(["http://localhost:3000", "https://app.example.com"]);
    expect(config.emulator.tokensPerSecond).toBe(12.5);
    expect(config.port).toBe(8765);
    expect(config.cursorAccessToken).toBe("env-token");
    expect(config.dataDir).toBe("/data/cursor-bridge");
  });

  it("names every invalid setting with its source and never echoes values", () => {
    const error = configError(() =>
      loadConfig({
        ...base,
        env: { CURSOR_BRIDGE_PORT: "eighty", CURSOR_BRIDGE_UPSTREAM: "cloud", CURSOR_API_URL: "ftp://x" },
        file: { path: "/cfg.json", data: { stallTimeoutMs: -1, prot: 1, apiKey: "file-secret-key" } },
        flags: { maxBodyBytes: "1.5", bogus: "x" },
      }),
    );
    expect(error.code).toBe("invalid_request");
    expect(error.detail).toBe("invalid_config");
    const text = error.message;
    expect(text).toContain("port (from env CURSOR_BRIDGE_PORT): expected an integer");
    expect(text).toMatch(/upstream \(from env CURSOR_BRIDGE_UPSTREAM\): Invalid option/);
    expect(text).toContain("cursorApiUrl (from env CURSOR_API_URL)");
    expect(text).toContain("stallTimeoutMs (from config file /cfg.json)");
    expect(text).toContain("prot (from config file /cfg.json): unknown setting");
    expect(text).toContain("apiKey (from config file /cfg.json): secrets are not allowed");
    expect(text).toContain("maxBodyBytes (from flag --max-body-bytes): expected an integer");
    expect(text).toContain("bogus (from flags): unknown setting");
    expect(text).not.toContain("file-secret-key");
    expect(text).not.toContain("eighty");
  });

  it("resolves allowed hosts/origins and the body timeout from flags > env > file", () => {
    const file = {
      path: "/c.json",
      data: { allowedHosts: ["file.lan"], allowedOrigins: ["http://file:1"], bodyTimeoutMs: 5 },
    };
    const env = {
      CURSOR_BRIDGE_ALLOWED_HOSTS: "env.lan,*",
      CURSOR_BRIDGE_ALLOWED_ORIGINS: "https://env.example,vscode-webview://abc",
    };
    const fromFile = loadConfig({ ...base, env: {}, file });
    expect([fromFile.allowedHosts, fromFile.allowedOrigins, fromFile.bodyTimeoutMs]).toEqual([
      ["file.lan"],
      ["http://file:1"],
      5,
    ]);
    const fromEnv = loadConfig({ ...base, env, file });
    expect([fromEnv.allowedHosts, fromEnv.allowedOrigins]).toEqual([
      ["env.lan", "*"],
      ["https://env.example", "vscode-webview://abc"],
    ]);
    const fromFlags = loadConfig({
      ...base,
      env,
      file,
      flags: { allowedHosts: ["flag.lan,b.lan", "c.lan"], bodyTimeoutMs: "7" },
    });
    expect([fromFlags.allowedHosts, fromFlags.bodyTimeoutMs]).toEqual([["flag.lan", "b.lan", "c.lan"], 7]);
    const error = configError(() =>
      loadConfig({ ...base, env: { CURSOR_BRIDGE_ALLOWED_HOSTS: "evil.com/x", CURSOR_BRIDGE_ALLOWED_ORIGINS: "*" } }),
    );
    expect(error.message).toContain("allowedHosts (from env CURSOR_BRIDGE_ALLOWED_HOSTS): expected a host name");
    expect(error.message).toContain("allowedOrigins (from env CURSOR_BRIDGE_ALLOWED_ORIGINS): expected an origin");
  });

  it("takes the streams per upstream connection from flags > env > file, and refuses less than 1", () => {
    const file = { path: "/c.json", data: { upstreamStreamsPerConnection: 20 } };
    const env = { CURSOR_BRIDGE_UPSTREAM_STREAMS_PER_CONNECTION: "30" };
    expect(loadConfig({ ...base, env: {}, file }).upstreamStreamsPerConnection).toBe(20);
    expect(loadConfig({ ...base, env, file }).upstreamStreamsPerConnection).toBe(30);
    const flags = { upstreamStreamsPerConnection: "40" };
    expect(loadConfig({ ...base, env, file, flags }).upstreamStreamsPerConnection).toBe(40);
    expect(settingForFlag("--upstream-streams-per-connection")).toBe("upstreamStreamsPerConnection");
    const error = configError(() =>
      loadConfig({ ...base, env: { CURSOR_BRIDGE_UPSTREAM_STREAMS_PER_CONNECTION: "0" } }),
    );
    expect(error.message).toContain(
      "upstreamStreamsPerConnection (from env CURSOR_BRIDGE_UPSTREAM_STREAMS_PER_CONNECTION)",
    );
  });

  it("rejects wildcard CORS and relative directories", () => {
    const error = configError(() =>
      loadConfig({ ...base, env: { CURSOR_BRIDGE_CORS_ORIGINS: "*", CURSOR_BRIDGE_DATA_DIR: "data" } }),
    );
    expect(error.message).toContain("corsOrigins (from env CURSOR_BRIDGE_CORS_ORIGINS): expected an origin");
    expect(error.message).toContain("dataDir (from env CURSOR_BRIDGE_DATA_DIR): expected an absolute path");
  });

  it("reads the gateway's price overrides from the file and the budget warning threshold from any source", () => {
    const prices = { "my-model*": { input: 1, cachedInput: 0.1, output: 2 } };
    const config = loadConfig({
      ...base,
      env: { CURSOR_BRIDGE_BUDGET_WARN_PERCENT: "90" },
      file: { path: "/c.json", data: { prices } },
    });
    expect(config.prices).toEqual(prices);
    expect(config.budgetWarnPercent).toBe(90);
    const error = configError(() =>
      loadConfig({ ...base, env: {}, file: { path: "/c.json", data: { prices: { "x*": { input: -1 } } } } }),
    );
    expect(error.message).toContain("prices (from config file /c.json): x*: expected");
  });

  it("rejects a file that is not an object", () => {
    expect(configError(() => loadConfig({ ...base, env: {}, file: { path: "/c.json", data: [1] } })).message).toContain(
      "config file /c.json: expected a JSON object",
    );
  });
});

describe("config file discovery", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "cb-config-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("finds <configDir>/config.json, optional when absent", async () => {
    const env = { XDG_CONFIG_HOME: root };
    expect(resolveConfigFilePath({ ...base, env })).toEqual({
      path: join(root, "cursor-bridge", "config.json"),
      required: false,
    });
    await expect(loadConfigFromSources({ ...base, env })).resolves.toMatchObject({ port: 8765 });
    await mkdir(join(root, "cursor-bridge"), { recursive: true });
    await writeFile(join(root, "cursor-bridge", "config.json"), JSON.stringify({ $schema: "x", port: 4321 }));
    await expect(loadConfigFromSources({ ...base, env })).resolves.toMatchObject({ port: 4321 });
  });

  it("requires an explicit --config file and reports bad JSON", async () => {
    const missing = join(root, "nope.json");
    await expect(loadConfigFromSources({ ...base, env: {}, flags: { config: missing } })).rejects.toMatchObject({
      code: "invalid_request",
      message: expect.stringContaining(missing),
    });
    const broken = join(root, "broken.json");
    await writeFile(broken, "{");
    await expect(loadConfigFromSources({ ...base, env: { CURSOR_BRIDGE_CONFIG: broken } })).rejects.toMatchObject({
      message: `The config file ${broken} is not valid JSON.`,
    });
  });

  it("uses --config-dir for the default file location", () => {
    expect(resolveConfigFilePath({ ...base, env: {}, flags: { configDir: "/opt/cb" } }).path).toBe(
      "/opt/cb/config.json",
    );
  });
});

describe("adminKey", () => {
  const digest = `sha256:${"ab".repeat(32)}`;

  it("takes the key or its sha256 form from a flag or the environment", () => {
    expect(loadConfig({ ...base, env: { CURSOR_BRIDGE_ADMIN_KEY: "an-admin-key-of-length" } }).adminKey).toBe(
      "an-admin-key-of-length",
    );
    expect(loadConfig({ ...base, env: {}, flags: { adminKey: digest } }).adminKey).toBe(digest);
    expect(configError(() => loadConfig({ ...base, env: { CURSOR_BRIDGE_ADMIN_KEY: "short" } })).message).toContain(
      "adminKey (from env CURSOR_BRIDGE_ADMIN_KEY): use at least 16 characters",
    );
  });

  it("the config file may hold only its digest, and a key there is refused without being echoed", () => {
    expect(loadConfig({ ...base, env: {}, file: { path: "/c.json", data: { adminKey: digest } } }).adminKey).toBe(
      digest,
    );
    const error = configError(() =>
      loadConfig({ ...base, env: {}, file: { path: "/c.json", data: { adminKey: "plain-admin-key-in-a-file" } } }),
    );
    expect(error.message).toContain("adminKey (from config file /c.json): only its digest belongs in the config file");
    expect(error.message).not.toContain("plain-admin-key-in-a-file");
  });
});

describe("describeConfig", () => {
  it("lists every setting with flag, env, default and description", () => {
    const rows = describeConfig();
    expect(rows).toHaveLength(SETTINGS.length + 1);
    expect(rows.find((row) => row.name === "port")).toEqual({
      name: "port",
      flag: "--port",
      env: "CURSOR_BRIDGE_PORT",
      default: "8765",
      description: "TCP port (0 = any free port)",
    });
    for (const row of rows) {
      expect(row.description.length).toBeGreaterThan(0);
      if (row.flag !== undefined) expect(settingForFlag(row.flag)).toBe(row.name);
    }
    expect(settingForFlag("--nope")).toBeUndefined();
    expect(rows.find((row) => row.name === "cursorAccessToken")?.flag).toBeUndefined();
  });
});
