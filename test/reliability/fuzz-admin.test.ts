/**
 * Seeded fuzzer over the team gateway's admin API (/admin, served over a socket by the real app with the gateway as
 * serve wires it, memory stores): create, show, update, rotate and revoke keys, read the audit, with valid bodies
 * broken field by field (random JSON, wrong types, unknown fields, key-shaped names, deep nesting, truncated or
 * non-JSON bodies, wrong content types), odd refs (key material, encoded junk, very long), and wrong, missing or
 * foreign credentials, hosts and origins. Every answer must be well-formed: no 5xx, an OpenAI error body on every
 * error, JSON on every success, no key ever written to the audit log, and the server healthy at the end.
 * `FUZZ_SEED` and `FUZZ_CASES` reproduce or widen a run; the seed and the counts are printed.
 */
import { Agent } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway, type Gateway } from "../../src/gateway/index.js";
import { requireJson } from "../../src/server/request-guard.js";
import { createMemoryAuditLog } from "../../src/stores/memory/audit-log.js";
import { createMemoryKeyStore } from "../../src/stores/memory/key-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { Gen, prng } from "./support/fuzz-cases.js";
import { type Answer, counted, type HttpCase, healthCase, runCases, send } from "./support/fuzz-run.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const CASES = Number(process.env.FUZZ_CASES ?? 10_000);
const CONCURRENCY = 12;
const ADMIN = "the-admin-key-of-the-fuzzer-0123456789";
const KEY_SHAPED = /cbk-[A-Za-z0-9_-]{16,}|sk-[A-Za-z0-9_-]{16,}/;

const NAMES = ["alice", "bob", "carol", "dave", "erin"];
const SETTINGS: Record<string, () => unknown[]> = {
  budget: () => ["10/month", "2.50/day", "0.000001/week", "10/mnth", "-1/day", "none", null, 5],
  rpm: () => [1, 60, "30", 0, -1, 1.5, "many", null, 1e20],
  tpm: () => [1000, "5000", 0, null, "none", {}],
  max_parallel: () => [1, 2, "3", 0, null, []],
  maxParallel: () => [1, "x"],
  models: () => [["composer-*"], "gpt-5*,claude-*", [], [""], ["a b"], [1], "none", null],
  account: () => ["default", "gpu", "Not An Account", "none", null, 7],
  expires: () => ["30d", "12h", "90m", "2w", "0d", "1000000w", "soon", "none", null],
};

function settingsBody(g: Gen, withName: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (withName) {
    body.name = g.chance(0.8)
      ? g.pick(NAMES)
      : g.pick([
          "cbk-abcdefghijklmnopqrstuvwxyz0123",
          "sk-proj-abcdefghijklmnop1234",
          "vk_0123456789abcdef",
          "",
          g.string(),
        ]);
  }
  for (const [field, values] of Object.entries(SETTINGS)) if (g.chance(0.3)) body[field] = g.pick(values());
  if (g.chance(0.1)) body[g.pick(["unknown", "key", "hash", "id", "__proto__"])] = g.json();
  if (g.chance(0.1)) {
    const fields = Object.keys(body);
    if (fields.length > 0) body[g.pick(fields)] = g.json();
  }
  return body;
}

function ref(g: Gen): string {
  const raw = g.chance(0.7)
    ? g.pick(NAMES)
    : g.pick([
        "vk_0123456789abcdef",
        "cbk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "sk-proj-abcdefghijklmnopqrstuvwxyz",
        "a".repeat(2000),
        g.string().replace(/[\ud800-\udfff]/g, "?") || "x",
        "..",
        "%2e%2e",
      ]);
  return encodeURIComponent(raw);
}

function adminRequest(g: Gen, port: number): HttpCase {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}` };
  const auth = g.int(100);
  if (auth < 85) headers.authorization = `Bearer ${ADMIN}`;
  else if (auth < 92)
    headers.authorization = g.pick(["Bearer wrong", "Bearer", "Basic Zm9vOmJhcg==", `bearer ${ADMIN}x`]);
  if (g.chance(0.02)) headers.host = g.pick(["evil.example", "localhost"]);
  if (g.chance(0.02)) headers.origin = g.pick(["https://evil.example", "null"]);
  const kind = g.int(100);
  let method = "GET";
  let path = "/admin/keys";
  let body: unknown;
  let label = "list";
  if (kind < 30) {
    method = "POST";
    body = settingsBody(g, true);
    label = "create";
  } else if (kind < 50) {
    method = g.pick(["PATCH", "POST"]);
    path = method === "PATCH" ? `/admin/keys/${ref(g)}` : `/admin/keys/${ref(g)}/update`;
    body = settingsBody(g, g.chance(0.05));
    label = "update";
  } else if (kind < 60) {
    path = `/admin/keys/${ref(g)}`;
    label = "show";
  } else if (kind < 70) {
    method = "POST";
    path = `/admin/keys/${ref(g)}/${g.pick(["rotate", "revoke"])}`;
    label = "rotate-revoke";
  } else if (kind < 78) {
    path = `/admin/audit${g.pick(["", "?limit=5", "?limit=-1", "?limit=x", "?limit=1e9", "?limit=0"])}`;
    label = "audit";
  } else if (kind < 85) {
    method = g.pick(["DELETE", "PUT", "GET", "POST", "OPTIONS"]);
    path = g.pick([
      "/admin",
      "/admin/",
      "/admin/nothing",
      "/admin/keys/a/b/c",
      "/admin/keys//rotate",
      "/admin/audit/x",
    ]);
    label = "other";
  }
  let buffer: Buffer | undefined;
  if (body !== undefined) {
    headers["content-type"] = g.chance(0.92) ? "application/json" : g.pick(["text/plain", "application/xml", ""]);
    let text = JSON.stringify(body);
    const broken = g.int(100);
    if (broken < 4) text = text.slice(0, g.int(text.length + 1));
    else if (broken < 6) text = g.pick(["", "null", "[]", "42", '"x"', "{", "not json"]);
    else if (broken < 8) text = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    buffer = broken === 8 ? Buffer.from([0xff, 0xfe, 0x7b]) : Buffer.from(text);
  }
  return { method, path, headers, body: buffer, label };
}

/** Undefined when the answer is well-formed; otherwise what is wrong with it. */
function judge(req: HttpCase, answer: Answer): string | undefined {
  const { status, headers, body } = answer;
  if (status >= 500) return `${status}`;
  if (req.method === "HEAD" || req.method === "OPTIONS" || status === 204) return undefined;
  const type = String(headers["content-type"] ?? "");
  if (!type.includes("application/json")) return `content-type ${type}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "body is not JSON";
  }
  if (status >= 400) {
    const error = (parsed as { error?: Record<string, unknown> }).error;
    if (typeof error !== "object" || error === null) return "no error object";
    if (typeof error.message !== "string" || error.message === "") return "no message";
    if (typeof error.type !== "string") return "no type";
    if (/\n\s+at /.test(error.message)) return "stack trace in message";
    if (/--[a-z]/.test(error.message) && status === 400) return "names a CLI flag";
    if (KEY_SHAPED.test(error.message)) return "key material in the message";
  }
  return undefined;
}

describe("seeded fuzzer over the admin API", () => {
  let stack: Stack;
  let gateway: Gateway;
  let agent: Agent;
  const audit = createMemoryAuditLog();
  beforeAll(async () => {
    gateway = await createGateway({
      keys: createMemoryKeyStore(),
      audit,
      apiKey: undefined,
      adminKey: ADMIN,
      adminBodyGuard: requireJson(),
      accounts: () => ["default"],
      logger: silentLogger,
    });
    stack = await startStack({ gateway: { auth: gateway.auth, admin: gateway.admin } });
    agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  });
  afterAll(async () => {
    agent?.destroy();
    gateway?.close();
    await stack?.close();
  });

  it(`answers ${CASES} fuzzed admin requests (seed ${SEED}) well-formed, with no key in the audit`, async () => {
    const g = new Gen(prng(SEED));
    const port = stack.server.port;
    const requests = Array.from({ length: CASES }, () => adminRequest(g, port));
    const { byStatus, byLabel, failures, seconds } = await runCases(agent, port, requests, CONCURRENCY, judge);
    const entries = await audit.read({ limit: 1_000_000 });
    const leaked = entries.filter((entry) => KEY_SHAPED.test(JSON.stringify(entry)));
    const health = await send(agent, port, healthCase(port));
    process.stdout.write(
      `reliability: admin fuzzer seed=${SEED} ran ${CASES} cases in ${seconds} s; statuses ${counted(byStatus)}; ` +
        `kinds ${counted(byLabel)}; audit entries ${entries.length}, with key material ${leaked.length}; ` +
        `failures ${failures.length}\n`,
    );
    expect(failures).toEqual([]);
    expect(leaked.map((entry) => JSON.stringify(entry).slice(0, 200))).toEqual([]);
    expect(health.status).toBe(200);
    // The fuzzer reached the API, not only its guards.
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(CASES / 10);
    expect(byStatus.get(201) ?? 0).toBeGreaterThan(0);
  }, 300_000);
});
