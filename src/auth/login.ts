/**
 * The services behind `cursor-bridge login`, `login --api-key`, `login --import` and `status`: each runs one flow
 * end to end and stores the result, so the CLI only parses flags, prints and opens the browser.
 */

import type { CredentialSource, CredentialStore, CredentialsInput } from "../stores/types.js";
import { readJwtClaims, userIdFromSubject } from "../util/jwt.js";
import { type CredentialStatus, describeCredentials } from "./credential-status.js";
import { exchangeForTokens } from "./exchange.js";
import type { FetchLike, TokenPair } from "./http.js";
import { findExistingCredentials, type ImportOptions, type ImportReport } from "./import.js";
import { type PollForLoginOptions, pollForLogin } from "./login-poll.js";
import { buildLoginUrl, createPkcePair, type PkceRandom } from "./pkce.js";
import { DEFAULT_CURSOR_API_URL } from "./token-source.js";

export { type CredentialStatus, describeCredentials };

/** `status`: the stored credentials' summary, or undefined when not logged in. Throws for an invalid file. */
export async function readCredentialStatus(
  store: CredentialStore,
  now: () => number = Date.now,
): Promise<CredentialStatus | undefined> {
  const credentials = await store.load();
  return credentials === undefined ? undefined : describeCredentials(credentials, store.location, now());
}

/** Fills email and userId from the token (and the poll's `authId`, §3.1 step 6) where available. */
function withIdentity(
  pair: TokenPair,
  source: CredentialSource,
  extra: { apiKey?: string; authId?: string; email?: string } = {},
): CredentialsInput {
  const claims = readJwtClaims(pair.accessToken);
  const email = claims?.email ?? extra.email;
  const userId = userIdFromSubject(extra.authId) ?? userIdFromSubject(claims?.sub);
  return {
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    source,
    ...(extra.apiKey === undefined ? {} : { apiKey: extra.apiKey }),
    ...(email === undefined ? {} : { email }),
    ...(userId === undefined ? {} : { userId }),
  };
}

/** A login records the Cursor API URL it was made against, unless it is Cursor's own (files stay as they were). */
function withApiUrl(input: CredentialsInput, apiUrl: string): CredentialsInput {
  const url = apiUrl.replace(/\/+$/, "");
  return url === DEFAULT_CURSOR_API_URL ? input : { ...input, apiUrl: url };
}

/** Options shared by the login flows. */
export interface StoreOptions {
  store: CredentialStore;
  /** Replace an invalid credential file (set only after telling the user). */
  overwriteInvalid?: boolean;
  /** @default Date.now */
  now?: () => number;
}

/** Options of {@link loginWithBrowser}. */
export interface BrowserLoginOptions
  extends StoreOptions,
    Pick<PollForLoginOptions, "fetch" | "sleep" | "signal" | "onProgress" | "maxAttempts" | "delayMs"> {
  /** @default "https://cursor.com" via config */
  websiteUrl: string;
  /** @default "https://api2.cursor.sh" via config */
  apiUrl: string;
  /** Receives the approval URL (safe to print); the CLI prints it and may open a browser. */
  onLoginUrl: (url: string) => void | Promise<void>;
  random?: PkceRandom;
}

/** PKCE browser login (§3.1): show the URL, poll until approved, store the tokens. */
export async function loginWithBrowser(options: BrowserLoginOptions): Promise<CredentialStatus> {
  const now = options.now ?? Date.now;
  const pair = await createPkcePair(options.random);
  await options.onLoginUrl(buildLoginUrl(options.websiteUrl, pair));
  const {
    websiteUrl: _websiteUrl,
    onLoginUrl: _onLoginUrl,
    random: _random,
    store,
    overwriteInvalid,
    ...poll
  } = options;
  const tokens = await pollForLogin({ ...poll, now, uuid: pair.uuid, verifier: pair.verifier });
  const input = withIdentity(tokens, "login", tokens.authId === undefined ? {} : { authId: tokens.authId });
  const saved = await store.save(withApiUrl(input, options.apiUrl), { overwriteInvalid: overwriteInvalid ?? false });
  return describeCredentials(saved, store.location, now());
}

/** Options of {@link loginWithApiKey}. */
export interface ApiKeyLoginOptions extends StoreOptions {
  apiUrl: string;
  fetch?: FetchLike;
  signal?: AbortSignal;
}

/** API-key login (§3.5): exchange the key for a token pair and keep the key for later refreshes. */
export async function loginWithApiKey(apiKey: string, options: ApiKeyLoginOptions): Promise<CredentialStatus> {
  const now = options.now ?? Date.now;
  const pair = await exchangeForTokens(apiKey, {
    apiUrl: options.apiUrl,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const saved = await options.store.save(withApiUrl(withIdentity(pair, "api-key", { apiKey }), options.apiUrl), {
    overwriteInvalid: options.overwriteInvalid ?? false,
  });
  return describeCredentials(saved, options.store.location, now());
}

/** Result of {@link importCredentials}. */
export interface ImportLoginResult {
  report: ImportReport;
  /** Set when credentials were found and stored. */
  status?: CredentialStatus;
}

/** `login --import`: find the Cursor CLI's or IDE's credentials and store the best ones. */
export async function importCredentials(options: ImportOptions & StoreOptions): Promise<ImportLoginResult> {
  const now = options.now ?? Date.now;
  const { report, credentials } = await findExistingCredentials(options);
  if (credentials === undefined) return { report };
  const { source, apiKey, email } = credentials;
  const extra = { ...(apiKey === undefined ? {} : { apiKey }), ...(email === undefined ? {} : { email }) };
  const input = withIdentity(credentials, source, extra);
  if (input.userId === undefined && credentials.userId !== undefined) input.userId = credentials.userId;
  const saved = await options.store.save(input, { overwriteInvalid: options.overwriteInvalid ?? false });
  return { report, status: describeCredentials(saved, options.store.location, now()) };
}
