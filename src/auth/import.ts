/**
 * Finds credentials that Cursor's own clients already hold (docs/protocol.md §3.4) so `cursor-bridge login --import`
 * can reuse them. The report says what was found where (paths, key names, email, expiry) and is safe to print: it
 * never contains a token. The tokens travel only in `credentials`, the chosen candidate.
 */

import type { CredentialSource } from "../stores/types.js";
import { jwtExpiresAtMs, readJwtClaims, userIdFromSubject } from "../util/jwt.js";
import { cursorCliAuthFile, cursorIdeStateDb, type PathEnvironment } from "../util/paths.js";
import {
  type CommandRunner,
  defaultCommandRunner,
  type FoundTokens,
  KEYCHAIN_SERVICES,
  type ReadOutcome,
  readCliAuthFile,
  readIdeStateDb,
  readKeychain,
} from "./import-sources.js";

/** Which store a candidate came from. */
export type ImportOrigin = "cli-file" | "cli-keychain" | "ide-state";

/** What one location held. Printable: no tokens. */
export interface ImportCandidateReport {
  origin: ImportOrigin;
  /** A path, or a description of the keychain items. */
  location: string;
  /**
   * found: usable credentials (an expired session that can be renewed too: see `refreshable`); incomplete: present but
   * no access token; expired: a session that expired and cannot be renewed; missing/unreadable/skipped as named.
   */
  status: "found" | "incomplete" | "expired" | "missing" | "unreadable" | "skipped";
  /** Names of the keys or keychain items that had a value. */
  keys: string[];
  email?: string;
  userId?: string;
  /** Access-token expiry (ISO), when the token is a JWT with `exp`. */
  expiresAt?: string;
  expired?: boolean;
  /**
   * For an expired session: whether it can be renewed (it has an API key, or a refresh token that has not expired
   * itself). An expired session that cannot is not imported.
   */
  refreshable?: boolean;
  /** Why the location was unusable, in plain words. */
  problem?: string;
}

/** Everything that was looked at, and which candidate was chosen. */
export interface ImportReport {
  candidates: ImportCandidateReport[];
  chosen?: ImportOrigin;
}

/** Credentials ready for `CredentialStore.save`. */
export interface ImportedCredentials {
  accessToken: string;
  refreshToken: string;
  apiKey?: string;
  source: Extract<CredentialSource, "import:cli" | "import:ide">;
  email?: string;
  userId?: string;
}

/** Result of {@link findExistingCredentials}. */
export interface ImportResult {
  report: ImportReport;
  /** The best candidate (unexpired, latest expiry; ties go to the CLI), if any. */
  credentials?: ImportedCredentials;
}

/** Options of {@link findExistingCredentials}. */
export interface ImportOptions {
  /** Home, env and platform the Cursor paths derive from. */
  paths: PathEnvironment;
  /** Runs `security` on macOS. @default execFile with a timeout */
  runCommand?: CommandRunner;
  /** @default 20000 (macOS may show an "allow access" prompt) */
  keychainTimeoutMs?: number;
  /** @default Date.now */
  now?: () => number;
}

interface Candidate {
  report: ImportCandidateReport;
  credentials?: ImportedCredentials;
}

function toCandidate(origin: ImportOrigin, location: string, outcome: ReadOutcome, now: number): Candidate {
  if (outcome.status === "missing") return { report: { origin, location, status: "missing", keys: [] } };
  if (outcome.status === "unreadable") {
    return { report: { origin, location, status: "unreadable", keys: [], problem: outcome.problem } };
  }
  const tokens: FoundTokens = outcome.tokens;
  const report: ImportCandidateReport = { origin, location, status: "found", keys: [...tokens.keys] };
  const claims = readJwtClaims(tokens.accessToken);
  const email = tokens.email ?? claims?.email;
  const userId = userIdFromSubject(claims?.sub);
  const expiresAtMs = jwtExpiresAtMs(tokens.accessToken);
  if (email !== undefined) report.email = email;
  if (userId !== undefined) report.userId = userId;
  if (expiresAtMs !== undefined) {
    report.expiresAt = new Date(expiresAtMs).toISOString();
    report.expired = expiresAtMs <= now;
  }
  if (tokens.accessToken === undefined) {
    report.status = "incomplete";
    report.problem = "no access token";
    return { report };
  }
  const credentials: ImportedCredentials = {
    accessToken: tokens.accessToken,
    // The official CLI stores a bare token as both access and refresh token (§3.2), so do the same.
    refreshToken: tokens.refreshToken ?? tokens.accessToken,
    source: origin === "ide-state" ? "import:ide" : "import:cli",
  };
  if (tokens.apiKey !== undefined) credentials.apiKey = tokens.apiKey;
  if (email !== undefined) credentials.email = email;
  if (userId !== undefined) credentials.userId = userId;
  if (report.expired === true) {
    report.refreshable = canRenew(tokens, now);
    if (!report.refreshable) {
      report.status = "expired";
      report.problem = "the session has expired and has no refresh token or API key to renew it";
      return { report };
    }
  }
  return { report, credentials };
}

/**
 * Whether an expired session can be renewed: by its API key, or by a refresh token of its own (a bare token stored as
 * both is only the expired access token) that has not expired itself.
 */
function canRenew(tokens: FoundTokens, now: number): boolean {
  if (tokens.apiKey !== undefined) return true;
  const refreshToken = tokens.refreshToken;
  if (refreshToken === undefined || refreshToken === tokens.accessToken) return false;
  const refreshExpiresAt = jwtExpiresAtMs(refreshToken);
  return refreshExpiresAt === undefined || refreshExpiresAt > now;
}

/** Expired tokens rank by their expiry (in the past); unknown expiry counts as "valid now". */
function rank(candidate: Candidate, now: number): number {
  const expiresAt = candidate.credentials === undefined ? undefined : jwtExpiresAtMs(candidate.credentials.accessToken);
  return expiresAt ?? now;
}

async function readKeychainCandidate(options: ImportOptions, now: number): Promise<Candidate> {
  const location = `macOS keychain (services ${Object.values(KEYCHAIN_SERVICES).join(", ")})`;
  if (options.paths.platform !== "darwin") {
    return { report: { origin: "cli-keychain", location, status: "skipped", keys: [], problem: "not macOS" } };
  }
  const outcome = await readKeychain(options.runCommand ?? defaultCommandRunner, options.keychainTimeoutMs ?? 20_000);
  return toCandidate("cli-keychain", location, outcome, now);
}

/** Looks in every known location and picks the best credentials. Never throws for a missing or broken source. */
export async function findExistingCredentials(options: ImportOptions): Promise<ImportResult> {
  const now = (options.now ?? Date.now)();
  const cliPath = cursorCliAuthFile(options.paths);
  const idePath = cursorIdeStateDb(options.paths);
  const candidates: Candidate[] = [
    toCandidate("cli-file", cliPath, await readCliAuthFile(cliPath), now),
    await readKeychainCandidate(options, now),
    toCandidate("ide-state", idePath, await readIdeStateDb(idePath), now),
  ];
  const report: ImportReport = { candidates: candidates.map((candidate) => candidate.report) };
  let best: Candidate | undefined;
  for (const candidate of candidates) {
    if (candidate.credentials === undefined) continue;
    if (best === undefined || rank(candidate, now) > rank(best, now)) best = candidate;
  }
  if (best?.credentials === undefined) return { report };
  report.chosen = best.report.origin;
  return { report, credentials: best.credentials };
}
