/**
 * `cursor-bridge emulator` as its own process: `--api-key` (repeatable, and CURSOR_BRIDGE_EMULATOR_API_KEYS) lets
 * `cursor-bridge login --api-key` log in to it, `GET /emulator/stats` lets another process count upstream Runs, and
 * `--max-concurrent-streams` goes out in its HTTP/2 SETTINGS.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";
import { agentClient, BlobStore, driveRun, runRequest } from "./support/raw-client.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

function isolatedEnv(extra: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-emu-"));
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d"), ...extra };
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once("exit", (code) => resolve({ code, out, err }));
  });
}

let child: ChildProcess;
let url: string;
const modelsFile = join(mkdtempSync(join(tmpdir(), "cursor-bridge-models-")), "models.txt");
writeFileSync(modelsFile, "# ids this test adds\nacme-9-pro\n");
const scratchDir = mkdtempSync(join(tmpdir(), "cursor-bridge-catalogue-"));
const catalogueFile = join(scratchDir, "catalogue.json");
writeFileSync(
  catalogueFile,
  JSON.stringify({
    models: [
      "acme-flat-1",
      {
        id: "acme-7",
        displayName: "Acme 7",
        vendor: "Acme",
        parameters: [
          { id: "effort", values: ["low", "high"] },
          { id: "fast", values: ["false", "true"] },
        ],
        defaults: { effort: "high", fast: "false" },
      },
    ],
  }),
);
const recordDir = join(scratchDir, "runs");

beforeAll(async () => {
  const args = [
    ...["emulator", "--port", "0", "--api-key", "key-one", "--api-key", "key-two", "--models", modelsFile],
    ...["--max-concurrent-streams", "7", "--catalogue", catalogueFile, "--record", recordDir],
  ];
  child = spawn(process.execPath, [BIN, ...args], {
    env: isolatedEnv({ CURSOR_BRIDGE_EMULATOR_API_KEYS: "key-three, key-four" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  url = await listeningOrigin(child, "emulator");
});

afterAll(async () => {
  const exit = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  await exit;
});

const exchange = (key: string) =>
  fetch(`${url}/auth/exchange_user_api_key`, { method: "POST", headers: { authorization: `Bearer ${key}` } });

describe("cursor-bridge emulator --api-key", () => {
  it("accepts every key from the flags and the environment, and no other", async () => {
    for (const key of ["key-one", "key-two", "key-three", "key-four"]) {
      const response = await exchange(key);
      expect(response.status, key).toBe(200);
      expect(await response.json()).toMatchObject({ accessToken: expect.any(String) });
    }
    expect((await exchange("key-five")).status).toBe(401);
  });

  it("lets `cursor-bridge login --api-key` log in", async () => {
    const result = await run(["login", "--api-key"], isolatedEnv({ CURSOR_API_URL: url, CURSOR_API_KEY: "key-two" }));
    expect(result.err).not.toMatch(/error/i);
    expect(result.code).toBe(0);
  });

  it("documents the flag with an example in --help", async () => {
    const help = await run(["emulator", "--help"], isolatedEnv());
    expect(help.out).toContain("--api-key <key>");
    expect(help.out).toContain("CURSOR_BRIDGE_EMULATOR_API_KEYS");
    // The help is wrapped to the terminal, so a phrase may break across lines.
    expect(help.out.replace(/\s+/g, " ")).toContain("cursor-bridge login --api-key");
    expect(help.out).toContain("GET /emulator/stats");
  });
});

describe("cursor-bridge emulator --max-concurrent-streams", () => {
  it("advertises the limit in the HTTP/2 SETTINGS", async () => {
    const session = connect(url);
    try {
      await once(session, "remoteSettings");
      expect(session.remoteSettings.maxConcurrentStreams).toBe(7);
    } finally {
      session.destroy();
    }
  });

  it("refuses a limit below 1 with a clear error", async () => {
    const result = await run(["emulator", "--port", "0", "--max-concurrent-streams", "0"], isolatedEnv());
    expect(result.code).not.toBe(0);
    expect(result.err).toContain("--max-concurrent-streams must be a whole number ≥ 1.");
  });

  it("refuses a log level it does not know in one line, without a stack", async () => {
    const result = await run(["emulator", "--port", "0", "--log-level", "verbose"], isolatedEnv());
    expect(result.code).toBe(2);
    expect(result.err.trim()).toBe("cursor-bridge emulator: --log-level must be debug, info, warn or error.");
  });
});

describe("GET /emulator/stats", () => {
  it("answers JSON with runs and the per-turn details", async () => {
    const response = await fetch(`${url}/emulator/stats`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/application\/json/);
    const stats = (await response.json()) as Record<string, unknown>;
    expect(stats).toEqual({
      runs: 0,
      runStreams: 0,
      runSseStreams: 0,
      bidiAppends: 0,
      webSearches: 0,
      webFetches: 0,
      // Earlier tests of this file logged in through the token routes.
      exchangeCalls: expect.any(Number),
      oauthTokenCalls: expect.any(Number),
      usableModelsCalls: 0,
      availableModelsCalls: 0,
      turns: [],
    });
    expect((await fetch(`${url}/emulator/stats`, { method: "POST" })).status).toBe(405);
    // docs/emulator.md and `emulator --help` name every field.
    const page = readFileSync(fileURLToPath(new URL("../../docs/emulator.md", import.meta.url)), "utf8");
    const undocumented = Object.keys(stats).filter((key) => key !== "turns" && !page.includes(`\`${key}\``));
    expect(undocumented).toEqual([]);
    const help = (await run(["emulator", "--help"], isolatedEnv())).out;
    expect(Object.keys(stats).filter((key) => !new RegExp(`\\b${key}\\b`).test(help))).toEqual([]);
  });
});

describe("REST endpoints current clients call with the raw API key (cursor-protocol-addendum-2.md §9)", () => {
  it("GET /v1/models lists the catalogue plus the --models ids; no key is 401", async () => {
    const listed = await fetch(`${url}/v1/models`, { headers: { authorization: "Bearer key-one" } });
    expect(listed.status).toBe(200);
    const { items } = (await listed.json()) as { items: { id: string }[] };
    const ids = items.map((item) => item.id);
    expect(ids).toContain("acme-9-pro");
    expect(ids).toContain("composer-2");
    expect((await fetch(`${url}/v1/models`)).status).toBe(401);
  });

  it("GET /v1/agents/{id}/usage is 404 for an agent the emulator has not run", async () => {
    const unknown = await fetch(`${url}/v1/agents/agent-0b6f3c52-6c1e-4c1a-9d59-2f1a7f4b9e11/usage`, {
      headers: { authorization: "Bearer key-two" },
    });
    expect(unknown.status).toBe(404);
  });
});

describe("cursor-bridge emulator --catalogue FILE and --record DIR", () => {
  it("serves the file's models in all three views, with parameters and variants", async () => {
    const listed = await fetch(`${url}/v1/models`, { headers: { authorization: "Bearer key-one" } });
    const { items } = (await listed.json()) as {
      items: { id: string; parameters?: { id: string }[]; variants?: { params: { id: string; value: string }[] }[] }[];
    };
    const acme = items.find((item) => item.id === "acme-7");
    expect(acme?.parameters?.map((p) => p.id)).toEqual(["effort", "fast"]);
    expect(acme?.variants).toHaveLength(4);
    expect(items.some((item) => item.id === "acme-flat-1")).toBe(true);
    expect(items.some((item) => item.id === "acme-9-pro")).toBe(true);
    const token = ((await (await exchange("key-one")).json()) as { accessToken: string }).accessToken;
    const usable = await fetch(`${url}/agent.v1.AgentService/GetUsableModels`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "x-cursor-client-type": "cli",
        "x-cursor-client-version": "cli-2026.10.01-e373342",
      },
      body: "{}",
    });
    const ids = ((await usable.json()) as { models: { modelId: string }[] }).models.map((m) => m.modelId);
    expect(ids).toEqual(expect.arrayContaining(["acme-7-low", "acme-7-high", "acme-7-low-fast", "acme-7-high-fast"]));
  });

  it("records a Run to the folder", async () => {
    const token = ((await (await exchange("key-two")).json()) as { accessToken: string }).accessToken;
    const result = await driveRun(agentClient(url, token), runRequest("hello recorder"), new BlobStore());
    expect(result.turnEnded).toBe(true);
    const deadline = Date.now() + 20_000;
    let lines: string[] = [];
    while (Date.now() < deadline) {
      const files = existsSync(recordDir) ? readdirSync(recordDir) : [];
      lines = files.flatMap((f) => readFileSync(join(recordDir, f), "utf8").trim().split("\n"));
      if (lines.some((l) => l.includes("turnEnded"))) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(lines.some((l) => l.includes("hello recorder"))).toBe(true);
    expect(lines.some((l) => l.includes("turnEnded"))).toBe(true);
  });
});
