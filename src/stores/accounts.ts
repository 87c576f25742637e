/**
 * What every {@link AccountStore} implementation shares: the rule for account names and the listing entry of a
 * record. Names become file names and Redis keys, so they are short, lowercase and free of path characters.
 */
import { ProxyError } from "../util/errors.js";
import type { AccountEntry, StoredCredentials } from "./types.js";

/** Lowercase letters and digits, then also `.`, `_` and `-`; at most 64 characters. */
export const ACCOUNT_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** True when `name` can name an account. */
export function isAccountName(name: string): boolean {
  return ACCOUNT_NAME_PATTERN.test(name);
}

/** Returns `name` when it can name an account. @throws ProxyError `invalid_request` naming the rule. */
export function checkAccountName(name: string): string {
  if (isAccountName(name)) return name;
  const shown = JSON.stringify(name.length > 70 ? `${name.slice(0, 70)}…` : name);
  throw new ProxyError(
    "invalid_request",
    `${shown} is not a valid account name: use 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. alice, team-seat-2).`,
    { param: "account", detail: "invalid_field" },
  );
}

/** The listing entry of one account's record. */
export function accountEntry(name: string, record: StoredCredentials): AccountEntry {
  return {
    name,
    ...(record.email === undefined ? {} : { email: record.email }),
    ...(record.userId === undefined ? {} : { userId: record.userId }),
    source: record.source,
    savedAt: record.savedAt,
  };
}
