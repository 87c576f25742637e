/** What the audit logs (memory, file, Redis) share: reading an entry back, and keeping the newest `limit`. */
import { parseJsonLine } from "./json-lines.js";
import type { AuditEntry } from "./types.js";

/**
 * An entry read back from storage, or undefined when the line is not one (a torn or foreign line is skipped; an
 * entry written after a torn one, on its line, is read: json-lines.ts).
 */
export function parseAuditEntry(text: string): AuditEntry | undefined {
  const value = parseJsonLine(text);
  if (typeof value !== "object" || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  if (typeof entry.at !== "string" || typeof entry.actor !== "string" || typeof entry.action !== "string") {
    return undefined;
  }
  return value as AuditEntry;
}

/** The newest `limit` entries of `entries` (oldest first); all of them without a limit. */
export function newest(entries: AuditEntry[], limit: number | undefined): AuditEntry[] {
  if (limit === undefined) return entries;
  return limit <= 0 ? [] : entries.slice(-limit);
}
