/**
 * Key management, shared by `cursor-bridge keys` and the admin API: create, list, show, update, revoke and rotate, each write
 * recorded in the audit log (who, what, when, from where; the key's name and id, never its material). A key is shown
 * once, in what create and rotate return; the store keeps its hash.
 */

import type { AuditLog, KeyStore, StoredKeyLimits, VirtualKeyRecord } from "../../stores/types.js";
import { ProxyError } from "../../util/errors.js";
import type { JsonValue } from "../../util/json-value.js";
import { clampForMessage } from "../../util/logger.js";
import { displayPrefix, hashKey, newKey, newKeyId } from "./key-material.js";
import {
  type KeyChangesInput,
  type KeySettingsInput,
  parseKeyChanges,
  parseKeySettings,
  type SettingsDialect,
} from "./key-options.js";

/** Who acts, for the audit log: `cli:<os user>` or `admin-api`, and from where (`cli`, a remote address). */
export interface Actor {
  actor: string;
  from: string;
}

/** A key as lists and the admin API show it: everything but the hash. */
export interface KeyView {
  id: string;
  name: string;
  /** The key's first characters. */
  prefix: string;
  status: "active" | "revoked" | "expired";
  createdAt: string;
  rotatedAt: string | null;
  /** When its settings last changed (`keys update`). */
  updatedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  /** Model globs; null = every model. */
  models: string[] | null;
  /** Named Cursor account; null = the default one. */
  account: string | null;
  limits: StoredKeyLimits;
}

/** A key just made (create, rotate): the only time it is shown. */
export interface IssuedKey {
  key: string;
  view: KeyView;
}

/** The key operations. */
export interface KeyService {
  list(): Promise<KeyView[]>;
  /** @throws ProxyError `not_found` */
  show(ref: string): Promise<KeyView>;
  create(input: KeySettingsInput, by: Actor, dialect?: SettingsDialect): Promise<IssuedKey>;
  /**
   * Changes a live key's settings (budget, rpm, tpm, max-parallel, models, expiry, account; `none` clears one); the
   * limits given replace those values, the others stay. @throws like revoke, or `invalid_request` naming the setting
   */
  update(ref: string, input: KeyChangesInput, by: Actor, dialect?: SettingsDialect): Promise<KeyView>;
  /** @throws ProxyError `not_found`, or `invalid_request` when already revoked */
  revoke(ref: string, by: Actor): Promise<KeyView>;
  /** A new key for the same record (the old one stops working). @throws like revoke */
  rotate(ref: string, by: Actor): Promise<IssuedKey>;
}

/** The view of a record at time `now`. */
export function viewOf(record: VirtualKeyRecord, now: number): KeyView {
  const expired = record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now;
  return {
    id: record.id,
    name: record.name,
    prefix: record.prefix,
    status: record.revokedAt !== undefined ? "revoked" : expired ? "expired" : "active",
    createdAt: record.createdAt,
    rotatedAt: record.rotatedAt ?? null,
    updatedAt: record.updatedAt ?? null,
    expiresAt: record.expiresAt ?? null,
    revokedAt: record.revokedAt ?? null,
    models: record.models ?? null,
    account: record.account ?? null,
    limits: record.limits,
  };
}

/** The record `ref` names: its id, or its name (the live key of that name, else the newest revoked one). */
export function findKey(records: readonly VirtualKeyRecord[], ref: string): VirtualKeyRecord | undefined {
  const byId = records.find((record) => record.id === ref);
  if (byId !== undefined) return byId;
  const named = records.filter((record) => record.name === ref);
  return named.find((record) => record.revokedAt === undefined) ?? named.at(-1);
}

/** The key service on a store and an audit log. */
export function createKeyService(options: { store: KeyStore; audit: AuditLog; now?: () => number }): KeyService {
  const { store, audit } = options;
  const now = options.now ?? Date.now;
  const iso = () => new Date(now()).toISOString();

  const resolve = async (ref: string): Promise<VirtualKeyRecord> => {
    const record = findKey(await store.list(), ref);
    if (record === undefined) {
      throw new ProxyError("not_found", `No key named or with the id "${clampForMessage(ref, 80)}".`, {
        detail: "not_found",
      });
    }
    return record;
  };
  const live = async (ref: string, verb: string): Promise<VirtualKeyRecord> => {
    const record = await resolve(ref);
    if (record.revokedAt !== undefined) {
      throw new ProxyError(
        "invalid_request",
        `The key "${record.name}" (${record.id}) is revoked; cannot ${verb} it.`,
        {
          detail: "failed_precondition",
          status: 409,
        },
      );
    }
    return record;
  };
  const record = (by: Actor, action: string, key: VirtualKeyRecord, detail: Record<string, JsonValue> = {}) =>
    audit.append({
      at: iso(),
      actor: by.actor,
      action,
      target: key.name,
      from: by.from,
      detail: { id: key.id, ...detail },
    });

  return {
    list: async () => (await store.list()).map((key) => viewOf(key, now())),
    show: async (ref) => viewOf(await resolve(ref), now()),
    async create(input, by, dialect) {
      const settings = parseKeySettings(input, dialect);
      const key = newKey();
      const createdAt = now();
      const created: VirtualKeyRecord = {
        id: newKeyId(),
        name: settings.name,
        hash: hashKey(key),
        prefix: displayPrefix(key),
        createdAt: new Date(createdAt).toISOString(),
        limits: settings.limits,
        ...(settings.expiresInMs === undefined
          ? {}
          : { expiresAt: new Date(createdAt + settings.expiresInMs).toISOString() }),
        ...(settings.models === undefined ? {} : { models: settings.models }),
        ...(settings.account === undefined ? {} : { account: settings.account }),
      };
      await store.create(created);
      await record(by, "key.create", created);
      return { key, view: viewOf(created, now()) };
    },
    async update(ref, input, by, dialect) {
      const changes = parseKeyChanges(input, dialect);
      const target = await live(ref, "update");
      const limits: StoredKeyLimits = { ...target.limits, ...changes.limits };
      for (const field of changes.cleared) delete limits[field];
      const at = now();
      const updated = await store.update(target.id, {
        limits,
        updatedAt: new Date(at).toISOString(),
        ...(changes.models === undefined ? {} : { models: changes.models }),
        ...(changes.account === undefined ? {} : { account: changes.account }),
        ...(changes.expiresInMs === undefined
          ? {}
          : { expiresAt: changes.expiresInMs === null ? null : new Date(at + changes.expiresInMs).toISOString() }),
      });
      // What changed, as settings (never key material): the audit says who changed what.
      const changed: Record<string, JsonValue> = {};
      for (const [field, value] of Object.entries(changes.limits)) changed[field] = value as JsonValue;
      for (const field of changes.cleared) changed[field] = null;
      if (changes.models !== undefined) changed.models = changes.models;
      if (changes.account !== undefined) changed.account = changes.account;
      if (changes.expiresInMs !== undefined) changed.expiresAt = updated.expiresAt ?? null;
      await record(by, "key.update", updated, { changes: changed });
      return viewOf(updated, now());
    },
    async revoke(ref, by) {
      const target = await live(ref, "revoke");
      const revoked = await store.update(target.id, { revokedAt: iso() });
      await record(by, "key.revoke", revoked);
      return viewOf(revoked, now());
    },
    async rotate(ref, by) {
      const target = await live(ref, "rotate");
      const key = newKey();
      const rotated = await store.update(target.id, {
        hash: hashKey(key),
        prefix: displayPrefix(key),
        rotatedAt: iso(),
      });
      await record(by, "key.rotate", rotated);
      return { key, view: viewOf(rotated, now()) };
    },
  };
}
