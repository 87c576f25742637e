/**
 * The admin API behind the app's own guards (app.request, no sockets): the Host and Origin checks of every path run
 * before it, a JSON body needs the JSON content type, unknown fields and wrong types are named, and an /admin path
 * it does not serve is its 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGateway, type Gateway } from "../../src/gateway/index.js";
import { requireJson } from "../../src/server/request-guard.js";
import { createMemoryAuditLog } from "../../src/stores/memory/audit-log.js";
import { createMemoryKeyStore } from "../../src/stores/memory/key-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { appWithRecorder } from "../server/doors.js";

const ADMIN = "the-admin-key-0123456789";
let gateway: Gateway;
let app: ReturnType<typeof appWithRecorder>["app"];
const audit = createMemoryAuditLog();

beforeAll(async () => {
  gateway = await createGateway({
    keys: createMemoryKeyStore(),
    audit,
    apiKey: undefined,
    adminKey: `sha256:${await sha256(ADMIN)}`,
    adminBodyGuard: requireJson(),
    logger: silentLogger,
  });
  app = appWithRecorder({}, silentLogger, undefined, { auth: gateway.auth, admin: gateway.admin }).app;
});
afterAll(() => gateway?.close());

async function sha256(text: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  return createHash("sha256").update(text).digest("hex");
}

const auth = { authorization: `Bearer ${ADMIN}` };

describe("the admin API's guards", () => {
  it("accepts the admin key given as its sha256 digest", async () => {
    expect((await app.request("/admin/keys", { headers: auth })).status).toBe(200);
  });

  it("a foreign Host or Origin is refused before the admin key is even looked at", async () => {
    const host = await app.request("http://evil.example/admin/keys", { headers: { ...auth, host: "evil.example" } });
    expect(host.status).toBe(403);
    expect(((await host.json()) as { error: { code: string } }).error.code).toBe("host_not_allowed");
    const origin = await app.request("/admin/keys", { headers: { ...auth, origin: "https://evil.example" } });
    expect(origin.status).toBe(403);
    expect(((await origin.json()) as { error: { code: string } }).error.code).toBe("origin_not_allowed");
  });

  it("POST /admin/keys needs a JSON content type; fields are checked by name", async () => {
    const text = await app.request("/admin/keys", {
      method: "POST",
      headers: { ...auth, "content-type": "text/plain" },
      body: JSON.stringify({ name: "x" }),
    });
    expect(text.status).toBe(415);
    const post = (body: unknown) =>
      app.request("/admin/keys", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const unknown = await post({ name: "x", colour: "red" });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe("colour");
    // Names every object has by inheritance are unknown fields too (the table of fields is a plain object).
    for (const field of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const inherited = await app.request("/admin/keys", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: `{"name":"x-${field.replaceAll("_", "")}","${field}":"y"}`,
      });
      expect(inherited.status, field).toBe(400);
      expect(((await inherited.json()) as { error: { param: string } }).error.param).toBe(field);
    }
    const wrongType = await post({ name: "x", models: "not-a-list-but-ok", rpm: "ten" });
    expect(wrongType.status).toBe(400);
    expect((await post(["x"])).status).toBe(400);
    expect((await post({ rpm: 1 })).status).toBe(400);
    const made = await post({ name: "ok", rpm: 2, max_parallel: 1 });
    expect(made.status).toBe(201);
    expect(((await made.json()) as { limits: unknown }).limits).toEqual({ rpm: 2, maxParallel: 1 });
  });

  it("a body over the app's size limit is refused before it is read (413)", async () => {
    const big = await app.request("/admin/keys", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "content-length": String(64 * 1024 * 1024) },
      body: "{}",
    });
    expect(big.status).toBe(413);
  });

  it("an /admin path it does not serve is its own 404; every call is audited without the admin key", async () => {
    const missing = await app.request("/admin/nothing", { headers: auth });
    expect(missing.status).toBe(404);
    const entries = await audit.read();
    expect(entries.some((e) => e.target === "/admin/nothing" && (e.detail as { status: number }).status === 404)).toBe(
      true,
    );
    expect(JSON.stringify(entries)).not.toContain(ADMIN);
  });
});

describe("the gateway's guard without virtual keys", () => {
  it("is the single --api-key check, exactly as before (and no check without one)", async () => {
    const withKey = await createGateway({
      keys: createMemoryKeyStore(),
      audit: createMemoryAuditLog(),
      apiKey: "the-local-api-key",
      adminKey: undefined,
      logger: silentLogger,
    });
    const guarded = appWithRecorder({ apiKey: "the-local-api-key" }, silentLogger, undefined, {
      auth: withKey.auth,
    }).app;
    const missing = await guarded.request("/v1/models");
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain(
      "with the key cursor-bridge was started with",
    );
    expect((await guarded.request("/v1/models", { headers: { "x-api-key": "wrong" } })).status).toBe(401);
    expect(
      (await guarded.request("/v1/models", { headers: { authorization: "Bearer the-local-api-key" } })).status,
    ).toBe(200);
    withKey.close();
    const open = await createGateway({
      keys: createMemoryKeyStore(),
      audit: createMemoryAuditLog(),
      apiKey: undefined,
      adminKey: undefined,
      logger: silentLogger,
    });
    const unguarded = appWithRecorder({}, silentLogger, undefined, { auth: open.auth }).app;
    expect((await unguarded.request("/v1/models")).status).toBe(200);
    expect((await unguarded.request("/admin/keys")).status).toBe(404);
    open.close();
  });
});

describe("the gateway's further guards", () => {
  it("run right after the key check on every door, with the principal already set", async () => {
    const store = createMemoryKeyStore();
    const service = (await import("../../src/gateway/index.js")).createKeyService({
      store,
      audit: createMemoryAuditLog(),
    });
    const { key } = await service.create({ name: "hana" }, { actor: "t", from: "t" });
    const gw = await createGateway({
      keys: store,
      audit: createMemoryAuditLog(),
      apiKey: undefined,
      adminKey: undefined,
      logger: silentLogger,
    });
    const seen: (string | undefined)[] = [];
    const app = appWithRecorder({}, silentLogger, undefined, {
      auth: gw.auth,
      guards: [
        async (c, next) => {
          seen.push(c.get("principal")?.keyName);
          await next();
        },
      ],
    }).app;
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    expect((await app.request("/v1/models", { headers })).status).toBe(200);
    const chat = await app.request("/v1/chat/completions", {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "gpt-5.2", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(200);
    await chat.text();
    expect((await app.request("/v1/models")).status).toBe(401);
    expect(seen).toEqual(["hana", "hana"]);
    gw.close();
  });
});
