/**
 * The credential record every {@link CredentialStore} implementation keeps: how a parsed record is checked and how
 * a record about to be saved is built. Hand-written rather than a zod schema because `serve` reads the credentials
 * before it prints its listening line, where loading zod costs more than everything else it does.
 */
import { ProxyError } from "../util/errors.js";
import { CREDENTIAL_SOURCES, type CredentialsInput, type StoredCredentials } from "./types.js";

/**
 * Checks a parsed credential record. Strict: a record with other keys is someone else's. The refusal names fields, never values.
 */
export function checkStoredCredentials(
  value: unknown,
): { ok: true; credentials: StoredCredentials } | { ok: false; fields: string[] } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, fields: ["(root)"] };
  const record = value as Record<string, unknown>;
  const fields: string[] = [];
  const nonEmpty = (key: string) => typeof record[key] === "string" && record[key] !== "";
  const optionalString = (key: string, min: number) =>
    record[key] === undefined || (typeof record[key] === "string" && (record[key] as string).length >= min);
  if (record.version !== 1) fields.push("version");
  if (!nonEmpty("accessToken")) fields.push("accessToken");
  if (!nonEmpty("refreshToken")) fields.push("refreshToken");
  if (!optionalString("apiKey", 1)) fields.push("apiKey");
  if (!(CREDENTIAL_SOURCES as readonly unknown[]).includes(record.source)) fields.push("source");
  if (!optionalString("email", 0)) fields.push("email");
  if (!optionalString("userId", 0)) fields.push("userId");
  if (!optionalString("apiUrl", 1)) fields.push("apiUrl");
  if (typeof record.savedAt !== "string") fields.push("savedAt");
  const known = new Set([
    "version",
    "accessToken",
    "refreshToken",
    "apiKey",
    "source",
    "email",
    "userId",
    "apiUrl",
    "savedAt",
  ]);
  for (const key of Object.keys(record)) if (!known.has(key)) fields.push(key);
  return fields.length === 0
    ? { ok: true, credentials: record as unknown as StoredCredentials }
    : { ok: false, fields };
}

/** Validates a record about to be saved; names missing fields only. */
export function credentialRecord(input: CredentialsInput, savedAt: Date): StoredCredentials {
  const record = { ...input, version: 1, savedAt: savedAt.toISOString() };
  // Absent optional fields are left out, as JSON would.
  for (const key of Object.keys(record) as Array<keyof typeof record>)
    if (record[key] === undefined) delete record[key];
  const checked = checkStoredCredentials(record);
  if (checked.ok) return checked.credentials;
  throw new ProxyError(
    "invalid_request",
    `Refusing to save incomplete credentials (fields: ${checked.fields.join(", ")}).`,
  );
}
