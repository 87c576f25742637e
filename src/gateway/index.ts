/**
 * The team gateway's entry for the composition roots (server/, cli/): virtual keys (keys/), the admin API (admin/)
 * and the audit log they write. `createGateway` loads the keys and returns the auth guard every API door runs and,
 * with an admin key, the /admin sub-app.
 */
import type { Hono, MiddlewareHandler } from "hono";
import type { AuditLog, KeyStore } from "../stores/types.js";
import type { AppEnv } from "../surfaces/kit/access-log.js";
import type { KeyUsageSource } from "../surfaces/kit/key-usage.js";
import type { Logger } from "../util/logger.js";
import { bearerToken } from "../util/presented-key.js";
import { createAdminApp } from "./admin/admin-app.js";
import { adminKeyDigest, isAdminKey } from "./admin/admin-key.js";
import { createRefusalAudit } from "./admin/refusal-audit.js";
import { keyAuth } from "./keys/auth.js";
import { createKeyIndex, type KeyIndex } from "./keys/key-index.js";
import { createKeyService } from "./keys/key-service.js";

export { adminKeyDigest } from "./admin/admin-key.js";
export type { KeySettingsInput } from "./keys/key-options.js";
export { type Actor, createKeyService, type IssuedKey, type KeyService, type KeyView } from "./keys/key-service.js";

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  keys: KeyStore;
  audit: AuditLog;
  /** The single local API key (`--api-key`). */
  apiKey: string | undefined;
  /** The admin key setting (the key, or `sha256:<hex>`); undefined = no admin API. */
  adminKey: string | undefined;
  logger: Logger;
  /** Runs on the admin API's JSON bodies (the app's content-type guard, server/request-guard.ts). */
  adminBodyGuard?: MiddlewareHandler<AppEnv> | undefined;
  /** The Cursor accounts this instance serves (a key made through the admin API may only name one). @default any */
  accounts?: (() => readonly string[]) | undefined;
  /** Each key's use this period (GET /admin/keys/NAME shows it); read when asked, so it may be set up later. */
  keyUsage?: (() => KeyUsageSource | undefined) | undefined;
  /** How often the key store is polled for changes (ms). @default 200 */
  pollMs?: number;
  now?: () => number;
}

/** What the app mounts. */
export interface Gateway {
  /** The auth guard of every API door (replaces the single `--api-key` check; see keys/auth.ts). */
  auth: MiddlewareHandler<AppEnv>;
  /** The /admin sub-app; undefined without an admin key (then /admin is a 404). */
  admin: Hono<AppEnv> | undefined;
  /** Whether a request's `Authorization: Bearer` is the admin key (always false without one). */
  isAdmin(authorization: string | undefined): boolean;
  index: KeyIndex;
  /**
   * Calls `listener` with a key's id (the owner of its turns, EngineRequest.owner) when the key is revoked or
   * expires, so what its turns hold (parked turns) is released at once, not at its TTL.
   */
  onOwnerGone(listener: (owner: string, reason: string) => void): () => void;
  /** Stops polling the keys and writes the refused admin calls still being counted to the audit log. */
  close(): Promise<void>;
}

/** Loads the keys (first read done when it resolves) and builds the guard and the admin API. */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const logger = options.logger;
  const index = await createKeyIndex({
    store: options.keys,
    logger,
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const service = createKeyService({
    store: options.keys,
    audit: options.audit,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const digest = options.adminKey === undefined ? undefined : adminKeyDigest(options.adminKey);
  const refusals = createRefusalAudit((entry) =>
    options.audit.append(entry).catch((error: unknown) => logger.warn("could not write the audit log", { error })),
  );
  const admin =
    digest === undefined
      ? undefined
      : createAdminApp({
          adminKeyDigest: digest,
          service,
          audit: options.audit,
          logger,
          afterWrite: index.refresh,
          accounts: options.accounts,
          bodyGuard: options.adminBodyGuard,
          usage: options.keyUsage,
          refusals,
          ...(options.now === undefined ? {} : { now: options.now }),
        });
  const isAdmin = (authorization: string | undefined) => {
    const presented = bearerToken(authorization);
    return digest !== undefined && presented !== undefined && isAdminKey(presented, digest);
  };
  const close = async () => {
    index.close();
    await refusals.flush();
  };
  const onOwnerGone = (listener: (owner: string, reason: string) => void) =>
    index.onRecordGone((record, why) =>
      listener(record.id, `its API key was ${why === "revoked" ? "revoked" : "expired"}`),
    );
  return { auth: keyAuth({ index, apiKey: options.apiKey }), admin, isAdmin, index, onOwnerGone, close };
}
