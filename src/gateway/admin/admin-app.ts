/**
 * The admin HTTP API under /admin (mounted only when an admin key is configured; without one every /admin path is
 * the app's 404). Every request needs `Authorization: Bearer <admin key>`; every request, refused ones included, is
 * written to the audit log (who, method and path, status, peer address; never a key; one peer's refusals once a
 * minute with their count). JSON in and out, OpenAI-shaped errors. The Host and Origin guards of the whole app run
 * before it.
 *
 *   GET  /admin/keys                  every key (no hashes)            POST /admin/keys {name, budget?, rpm?, tpm?,
 *   GET  /admin/keys/{name|id}        one key and its spend this period     max_parallel?, models?, account?, expires?}
 *   POST /admin/keys/{name|id}/rotate a new key for it (shown once)         → 201 {key, ...} (shown once)
 *   POST /admin/keys/{name|id}/revoke revoke it                        GET  /admin/audit?limit=N  the audit log
 *   PATCH /admin/keys/{name|id} (or POST …/update) {budget?, rpm?, tpm?, max_parallel?, models?, account?, expires?}:
 *                                     change its settings in place; null (or "none") clears one
 *
 * Refusals name the API field (`max_parallel`), never a CLI flag. Paths and targets reach the audit log redacted
 * (a key pasted into a path is never written).
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { isAccountName } from "../../stores/accounts.js";
import type { AuditEntry, AuditLog } from "../../stores/types.js";
import type { AppEnv } from "../../surfaces/kit/access-log.js";
import type { KeyUsage, KeyUsageSource } from "../../surfaces/kit/key-usage.js";
import { openAIErrorResponse } from "../../surfaces/kit/openai-error.js";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage, type Logger, redactText } from "../../util/logger.js";
import { bearerToken } from "../../util/presented-key.js";
import type { KeyChangesInput, KeySettingsInput } from "../keys/key-options.js";
import type { Actor, IssuedKey, KeyService } from "../keys/key-service.js";
import { peerAddress } from "../peer-address.js";
import { isAdminKey } from "./admin-key.js";
import { createRefusalAudit, type RefusalAudit } from "./refusal-audit.js";

/** Options of {@link createAdminApp}. */
export interface AdminAppOptions {
  /** Hex SHA-256 of the admin key (admin-key.ts). */
  adminKeyDigest: string;
  service: KeyService;
  audit: AuditLog;
  logger: Logger;
  /** Runs on POST /admin/keys after the admin key check (serve passes the app's JSON content-type guard). */
  bodyGuard?: MiddlewareHandler<AppEnv> | undefined;
  /** Called after a write, so this instance serves the change at once. */
  afterWrite?: () => Promise<void>;
  /** The Cursor accounts this instance serves: a new key may only name one of them. @default any account */
  accounts?: (() => readonly string[]) | undefined;
  /** Each key's use this period, for GET /admin/keys/{name|id}. @default the answer has no `usage` */
  usage?: (() => KeyUsageSource | undefined) | undefined;
  /** Counts one peer's refused calls (refusal-audit.ts); the gateway passes its own to flush it when it closes. */
  refusals?: RefusalAudit | undefined;
  /** @default Date.now */
  now?: () => number;
}

const ACTOR = "admin-api";

/** The peer address of a request (the Node adapter's socket), or `unknown` (app.request() in tests). */
const peerOf = (c: Context): string => peerAddress(c) ?? "unknown";

function requireAdmin(digest: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const bearer = bearerToken(c.req.header("authorization"));
    if (bearer === undefined || !isAdminKey(bearer, digest)) {
      throw new ProxyError(
        "unauthenticated",
        bearer === undefined
          ? "The admin API needs the admin key: send `Authorization: Bearer <admin key>`."
          : "Invalid admin key.",
        { detail: "local_api_key" },
      );
    }
    await next();
  };
}

const FIELDS: Record<string, keyof KeySettingsInput> = {
  name: "name",
  budget: "budget",
  rpm: "rpm",
  tpm: "tpm",
  max_parallel: "maxParallel",
  maxParallel: "maxParallel",
  models: "models",
  account: "account",
  expires: "expires",
};

/** The JSON object of a body; unknown fields and wrong types are refused by name (`null` clears, on an update). */
async function bodyFields(c: Context, update: boolean): Promise<Record<string, unknown>> {
  const body: unknown = await c.req.json().catch(() => undefined);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProxyError(
      "invalid_request",
      update ? 'Expected a JSON object such as {"rpm": 60}.' : 'Expected a JSON object such as {"name": "alice"}.',
      { detail: "bad_request" },
    );
  }
  const input: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    // Own entries only: `constructor`, `toString` and `__proto__` are found on every object by inheritance.
    const name = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
    if (name === undefined || (update && name === "name")) {
      throw new ProxyError("invalid_request", `Unknown field \`${clampForMessage(field, 60)}\`.`, {
        param: clampForMessage(field, 60),
        detail: "invalid_field",
      });
    }
    const ok =
      typeof value === "string" ||
      (update && value === null) ||
      (typeof value === "number" && ["rpm", "tpm", "maxParallel"].includes(name)) ||
      (name === "models" && Array.isArray(value) && value.every((item) => typeof item === "string"));
    if (!ok) {
      throw new ProxyError("invalid_request", `Invalid type for \`${field}\`.`, {
        param: field,
        detail: "invalid_field",
      });
    }
    input[name] = value === null ? "none" : value;
  }
  return input;
}

/** The body of POST /admin/keys as {@link KeySettingsInput}. */
async function createInput(c: Context): Promise<KeySettingsInput> {
  const input = await bodyFields(c, false);
  if (typeof input.name !== "string") {
    throw new ProxyError("invalid_request", "`name` is required.", { param: "name", detail: "invalid_field" });
  }
  return input as unknown as KeySettingsInput;
}

const issued = ({ key, view }: IssuedKey) => ({ key, ...view });

/** The admin sub-app; mount it with `app.route("/admin", …)`. */
export function createAdminApp(options: AdminAppOptions): Hono<AppEnv> {
  const { service, audit, logger } = options;
  const now = options.now ?? Date.now;
  const app = new Hono<AppEnv>();
  const by = (c: Context): Actor => ({ actor: ACTOR, from: peerOf(c) });
  const written = async () => {
    await options.afterWrite?.().catch(() => undefined);
  };

  const checkAccount = (account: string | undefined) => {
    const served = options.accounts?.();
    if (account === undefined || served === undefined || /^(none|null|off)$/i.test(account.trim())) return;
    // A malformed name is refused by the settings' check, naming the field.
    if (!isAccountName(account.trim())) return;
    if (!served.includes(account.trim())) {
      throw new ProxyError(
        "invalid_request",
        `There is no login for the account \`${clampForMessage(account, 70)}\` on this server (it serves: ${served.join(", ")}): the account needs a login on the server and a restart of it first.`,
        { param: "account", detail: "invalid_field" },
      );
    }
  };

  const write = (entry: AuditEntry) =>
    audit.append(entry).catch((error: unknown) => logger.warn("could not write the audit log", { error }));
  const refusals = options.refusals ?? createRefusalAudit(write);
  // Outermost: every call is audited once it is answered (refused ones too, as `anonymous`, one peer's repeated
  // refusals as one entry a minute with their count: refusal-audit.ts).
  app.use("*", async (c, next) => {
    await next();
    const status = c.res.status;
    const entry: AuditEntry = {
      at: new Date(now()).toISOString(),
      actor: status === 401 ? "anonymous" : ACTOR,
      action: "admin.request",
      target: redactText(clampForMessage(c.req.path, 200)),
      from: peerOf(c),
      detail: { method: c.req.method, status },
    };
    await (status === 401 ? refusals.refused(entry, entry.from ?? "unknown") : write(entry));
  });
  app.use("*", requireAdmin(options.adminKeyDigest));

  if (options.bodyGuard !== undefined) {
    app.post("/keys", options.bodyGuard);
    app.patch("/keys/:ref", options.bodyGuard);
    app.post("/keys/:ref/update", options.bodyGuard);
  }
  app.get("/keys", async (c) => c.json({ object: "list", data: await service.list() }));
  app.post("/keys", async (c) => {
    const input = await createInput(c);
    checkAccount(input.account);
    const result = await service.create(input, by(c), "api");
    await written();
    return c.json(issued(result), 201, { "cache-control": "no-store" });
  });
  app.get("/keys/:ref", async (c) => {
    const view = await service.show(c.req.param("ref"));
    const source = options.usage?.();
    if (source === undefined) return c.json(view);
    const rows = await source.keyUsage();
    const usage: KeyUsage | undefined = rows.find((row) => row.keyId === view.id);
    return c.json({ ...view, usage: usage ?? null });
  });
  const update = async (c: Context) => {
    const input = (await bodyFields(c, true)) as KeyChangesInput;
    if (Object.keys(input).length === 0) {
      throw new ProxyError("invalid_request", 'Name at least one field to change, e.g. {"rpm": 60}.', {
        detail: "bad_request",
      });
    }
    checkAccount(input.account);
    const view = await service.update(c.req.param("ref") ?? "", input, by(c), "api");
    await written();
    return c.json(view);
  };
  app.patch("/keys/:ref", update);
  app.post("/keys/:ref/update", update);
  app.post("/keys/:ref/revoke", async (c) => {
    const view = await service.revoke(c.req.param("ref"), by(c));
    await written();
    return c.json(view);
  });
  app.post("/keys/:ref/rotate", async (c) => {
    const result = await service.rotate(c.req.param("ref"), by(c));
    await written();
    return c.json(issued(result), 200, { "cache-control": "no-store" });
  });
  app.get("/audit", async (c) => {
    const text = c.req.query("limit");
    const limit = text === undefined ? 100 : Number(text);
    if (!Number.isSafeInteger(limit) || limit < 0) {
      throw new ProxyError("invalid_request", "`limit` must be a whole number.", { param: "limit" });
    }
    return c.json({ object: "list", data: await audit.read({ limit }) });
  });
  app.all("*", (c) => {
    throw new ProxyError("not_found", `No admin route for ${c.req.method} ${clampForMessage(c.req.path, 200)}.`, {
      detail: "route_not_found",
    });
  });
  app.onError((error, c) => {
    const proxyError = ProxyError.from(error);
    if (proxyError.code === "internal") logger.error("admin API error", { path: c.req.path, error });
    return openAIErrorResponse(proxyError, { requestId: c.get("log")?.requestId });
  });
  return app;
}
