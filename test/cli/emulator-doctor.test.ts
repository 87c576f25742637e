/**
 * A setup that runs on the emulator is a working setup: `doctor` reports no failed check and `status` does not ask
 * Cursor's servers, whether nobody logged in (`serve` embeds the emulator) or the login was made against a standalone
 * emulator. A login remembers the Cursor URL it was made against: a start without CURSOR_API_URL uses it, and `doctor`
 * names a different one. The real CLI runs in a network namespace with no route out (when `unshare` may make one)
 * and with a preload that records every host it looks up or connects to other than loopback: none may appear.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCliContext, DEFAULT_CURSOR_API_URL } from "../../src/cli/context.js";
import { startBridge } from "../../src/cli/serve.js";
import { type CliHarness, captureIo, createCliHarness } from "./harness.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin", "cursor-bridge.js");
const RECORDER = fileURLToPath(new URL("./fixtures/record-connections.cjs", import.meta.url));
const KEY = "key_emulator_doctor_0123456789";

interface Check {
  id: string;
  status: string;
  detail: string;
}

/** Whether this machine lets the test make a network namespace (root, or unprivileged user namespaces). */
function namespaceProblem(): string | undefined {
  const probe = spawnSync("unshare", ["-rn", "true"], { encoding: "utf8" });
  if (probe.error !== undefined) return `unshare is not available (${probe.error.message})`;
  if (probe.status !== 0) return `unshare -rn is refused here (${probe.stderr.trim()})`;
  if (spawnSync("sh", ["-c", "command -v ip"]).status !== 0) return "`ip` (iproute2) is not on PATH";
  return undefined;
}

const scratch = mkdtempSync(join(tmpdir(), "cursor-bridge-emulator-doctor-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let runs = 0;

/**
 * Runs `script` (bash; `$BIN` is the CLI) with a fresh HOME, inside a network namespace with only loopback when one
 * can be made, every node process preloaded with the recorder. Resolves with stdout, stderr and the hosts recorded.
 */
function isolated(
  script: string,
  extraEnv: Record<string, string> = {},
): Promise<{
  code: number | null;
  out: string;
  err: string;
  hosts: string[];
}> {
  const dir = join(scratch, `run-${++runs}`);
  const record = join(dir, "hosts.txt");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(dir, "home"),
    XDG_CONFIG_HOME: join(dir, "home", ".config"),
    XDG_DATA_HOME: join(dir, "home", ".local", "share"),
    XDG_CACHE_HOME: join(dir, "home", ".cache"),
    NO_COLOR: "1",
    NODE_OPTIONS: `--require ${RECORDER}`,
    RECORD_CONNECTIONS_TO: record,
    BIN: `${process.execPath} ${BIN}`,
    ...extraEnv,
  };
  const body = `set -e; mkdir -p "$HOME"; ${script}`;
  const command =
    namespace === undefined ? ["unshare", "-rn", "bash", "-c", `ip link set lo up; ${body}`] : ["bash", "-c", body];
  return new Promise((resolve, reject) => {
    mkdirSync(dir, { recursive: true });
    const child = spawn(command[0] ?? "bash", command.slice(1), { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (out += part));
    child.stderr.setEncoding("utf8").on("data", (part: string) => (err += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      const hosts = existsSync(record) ? readFileSync(record, "utf8").split("\n").filter(Boolean) : [];
      resolve({ code, out, err, hosts });
    });
  });
}

const namespace = namespaceProblem();
if (namespace !== undefined) {
  if (process.env.CI === "true") throw new Error(`emulator-doctor: no network namespace: ${namespace}`);
  console.log(`emulator-doctor: runs without a network namespace (${namespace}); the preload still records hosts`);
}

describe("doctor and status on the emulator, offline", () => {
  it("without a login: doctor has no failed check, says the emulator serves, and contacts nobody", async () => {
    const run = await isolated("$BIN doctor --json; $BIN status --json > status.json || true; cat status.json >&2");
    expect(run.code, run.err).toBe(0);
    const body = JSON.parse(run.out) as { ok: boolean; checks: Check[] };
    expect(body.checks.filter((check) => check.status === "fail")).toEqual([]);
    const byId = new Map(body.checks.map((check) => [check.id, check]));
    expect(byId.get("credentials")).toMatchObject({ status: "info", detail: expect.stringContaining("emulator") });
    expect(byId.get("upstream-http2")).toMatchObject({
      status: "skip",
      detail: expect.stringContaining("not contacted"),
    });
    expect(byId.get("upstream-http1")).toMatchObject({ status: "skip" });
    const status = JSON.parse(run.err.slice(run.err.indexOf("{"))) as {
      loggedIn: boolean;
      upstream: { emulator: boolean; contacted: boolean };
    };
    expect(status).toMatchObject({ loggedIn: false, upstream: { emulator: true, contacted: false } });
    expect(run.hosts).toEqual([]);
  }, 150_000);

  it("with a login made against a standalone emulator: no CURSOR_API_URL needed afterwards, no failed check", async () => {
    const port = namespace === undefined ? 18766 : 0;
    // The emulator runs beside the CLI (inside the namespace when there is one: loopback is the namespace's own).
    const run = await isolated(
      [
        `$BIN emulator --port ${port} --api-key ${KEY} > emulator.out 2>&1 & EMULATOR=$!`,
        "trap 'kill $EMULATOR' EXIT",
        "for i in $(seq 100); do URL=$(grep -o 'http://127.0.0.1:[0-9]*' emulator.out | head -1); [ -n \"$URL\" ] && break; sleep 0.2; done",
        `CURSOR_API_URL=$URL CURSOR_API_KEY=${KEY} $BIN login --api-key > /dev/null`,
        "$BIN doctor --json",
        "$BIN status > status.txt 2>&1",
        "cat status.txt >&2",
      ].join("\n"),
    );
    expect(run.code, run.err).toBe(0);
    const body = JSON.parse(run.out) as { ok: boolean; checks: Check[] };
    expect(
      body.checks.filter((check) => check.status === "fail"),
      run.out,
    ).toEqual([]);
    const byId = new Map(body.checks.map((check) => [check.id, check]));
    expect(byId.get("credentials")?.detail).toMatch(/made against http:\/\/127\.0\.0\.1:\d+/);
    expect(byId.get("token")).toMatchObject({ status: "ok" });
    expect(byId.get("upstream-http2")).toMatchObject({ status: "ok", detail: expect.stringContaining("127.0.0.1") });
    expect(run.err).toMatch(/Login URL\s+http:\/\/127\.0\.0\.1:\d+ \(the login was made there\)/);
    expect(run.hosts).toEqual([]);
  }, 150_000);
});

describe("a login remembers the Cursor URL it was made against", () => {
  let harness: CliHarness;
  beforeEach(async () => {
    harness = await createCliHarness();
    harness.secrets.add(KEY);
    harness.emulator.addApiKey(KEY, { email: "emu@example.com" });
    const login = await harness.run(["login", "--api-key"], { env: { CURSOR_API_KEY: KEY } });
    expect(login.code, login.err).toBe(0);
  });
  afterEach(async () => {
    await harness.close();
  });

  it("records it, and serve started without CURSOR_API_URL uses it", async () => {
    const record = JSON.parse(readFileSync(join(harness.configDir, "credentials.json"), "utf8")) as { apiUrl?: string };
    expect(record.apiUrl).toBe(harness.emulator.url.replace(/\/+$/, ""));
    const { io, out } = captureIo({ ...harness.env, CURSOR_API_URL: undefined, CURSOR_WEBSITE_URL: undefined });
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
    try {
      expect(out.join("")).toContain(`Upstream: Cursor at ${record.apiUrl}`);
      const reply = await fetch(`${bridge.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "remembered" }] }),
      });
      expect(reply.status).toBe(200);
      expect(JSON.stringify(await reply.json())).toContain("You said: remembered");
    } finally {
      await bridge.close();
    }
  });

  it("doctor names a configured URL that is not the login's", async () => {
    const other = "http://127.0.0.1:9";
    const result = await harness.run(["doctor", "--json"], { env: { CURSOR_API_URL: other } });
    expect(result.code).toBe(1);
    const checks = (JSON.parse(result.out) as { checks: Check[] }).checks;
    const mismatch = checks.find((check) => check.id === "login-url");
    expect(mismatch).toMatchObject({ status: "fail" });
    expect(mismatch?.detail).toContain(harness.emulator.url.replace(/\/+$/, ""));
    expect(mismatch?.detail).toContain(other);
  });

  it("a new login goes to the configured URL (Cursor's by default), not to the previous login's", async () => {
    const env = { ...harness.env, CURSOR_API_URL: undefined, CURSOR_WEBSITE_URL: undefined };
    const flags = { json: false, config: {} };
    const later = await createCliContext(captureIo(env).io, flags);
    expect(later.config.cursorApiUrl).toBe(harness.emulator.url.replace(/\/+$/, ""));
    const relogin = await createCliContext(captureIo(env).io, flags, { useLoginUrl: false });
    expect(relogin.config.cursorApiUrl).toBe(DEFAULT_CURSOR_API_URL);
  });
});
