/**
 * What the key stores (memory, file, Redis) share: the errors they answer with, the check of a record read back from
 * disk or Redis, and how a change applies to a record.
 */
import { ProxyError } from "../util/errors.js";
import type { KeyRecordChanges, VirtualKeyRecord } from "./types.js";

/** The refusal of a second live key with the same name (or a reused id). */
export function duplicateKey(record: Pick<VirtualKeyRecord, "id" | "name">, byId = false): ProxyError {
  return new ProxyError(
    "invalid_request",
    byId
      ? `A key with the id ${record.id} already exists.`
      : `A key named "${record.name}" already exists. Pick another name, or revoke that key first.`,
    { detail: "already_exists", param: "name", status: 409 },
  );
}

/** The answer for an id no record has. */
export function unknownKey(id: string): ProxyError {
  return new ProxyError("not_found", `No key with the id ${id}.`, { detail: "not_found" });
}

/** The record with `changes` applied (undefined values leave a field as it was). */
export function withChanges(record: VirtualKeyRecord, changes: KeyRecordChanges): VirtualKeyRecord {
  const next: VirtualKeyRecord = { ...record };
  if (changes.hash !== undefined) next.hash = changes.hash;
  if (changes.prefix !== undefined) next.prefix = changes.prefix;
  if (changes.rotatedAt !== undefined) next.rotatedAt = changes.rotatedAt;
  if (changes.revokedAt !== undefined) next.revokedAt = changes.revokedAt;
  if (changes.updatedAt !== undefined) next.updatedAt = changes.updatedAt;
  if (changes.limits !== undefined) next.limits = { ...changes.limits };
  if (changes.models === null) delete next.models;
  else if (changes.models !== undefined) next.models = [...changes.models];
  if (changes.account === null) delete next.account;
  else if (changes.account !== undefined) next.account = changes.account;
  if (changes.expiresAt === null) delete next.expiresAt;
  else if (changes.expiresAt !== undefined) next.expiresAt = changes.expiresAt;
  return next;
}

/** True when `record` may not be added next to `existing`: same id, or same name while both are live. */
export function conflictsWith(record: VirtualKeyRecord, existing: VirtualKeyRecord): ProxyError | undefined {
  if (existing.id === record.id) return duplicateKey(record, true);
  if (existing.name === record.name && existing.revokedAt === undefined) return duplicateKey(record);
  return undefined;
}

const isString = (value: unknown): value is string => typeof value === "string";

/** A record read back from storage, or undefined when it is not one of ours (never trusted blindly). */
export function parseKeyRecord(value: unknown): VirtualKeyRecord | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (![record.id, record.name, record.hash, record.prefix, record.createdAt].every(isString)) return undefined;
  if (typeof record.limits !== "object" || record.limits === null) return undefined;
  if (record.models !== undefined && !(Array.isArray(record.models) && record.models.every(isString))) return undefined;
  return value as VirtualKeyRecord;
}
