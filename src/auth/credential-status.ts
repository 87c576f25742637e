/**
 * What a credential record says about who is logged in and until when, without its secrets. Its own module (not
 * login.ts) because a logged-in `serve` prints it in its banner, before it loads any of the login code.
 */

import type { CredentialSource, StoredCredentials } from "../stores/types.js";
import { jwtExpiresAtMs } from "../util/jwt.js";

/** Who is logged in and until when. Printable: no tokens. */
export interface CredentialStatus {
  location: string;
  source: CredentialSource;
  email?: string;
  userId?: string;
  /** Access-token expiry (ISO) when readable from the JWT. */
  expiresAt?: string;
  expired?: boolean;
  hasApiKey: boolean;
  savedAt: string;
}

/** Summarises stored credentials without their secrets. */
export function describeCredentials(credentials: StoredCredentials, location: string, now: number): CredentialStatus {
  const status: CredentialStatus = {
    location,
    source: credentials.source,
    hasApiKey: credentials.apiKey !== undefined,
    savedAt: credentials.savedAt,
  };
  if (credentials.email !== undefined) status.email = credentials.email;
  if (credentials.userId !== undefined) status.userId = credentials.userId;
  const expiresAt = jwtExpiresAtMs(credentials.accessToken);
  if (expiresAt !== undefined) {
    status.expiresAt = new Date(expiresAt).toISOString();
    status.expired = expiresAt <= now;
  }
  return status;
}
