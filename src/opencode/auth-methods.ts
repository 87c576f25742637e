/**
 * The choices `opencode auth login` offers for Cursor: the browser login (PKCE, polled like `cursor-bridge login`),
 * a Cursor API key (OpenCode's own masked prompt, stored as its `api` credential and exchanged on first use, as
 * `cursor-bridge login --api-key` does), and taking over the login the Cursor CLI or IDE already holds. OpenCode stores what the callbacks
 * return; nothing is written to cursor-bridge's own credential file.
 */
import { existsSync } from "node:fs";
import {
  buildLoginUrl,
  createPkcePair,
  type FetchLike,
  findExistingCredentials,
  type ImportOptions,
  pollForLogin,
} from "../auth/index.js";
import { cursorCliAuthFile, cursorIdeStateDb, type PathEnvironment } from "../util/paths.js";
import { oauthRecord } from "./tokens.js";
import type { AuthMethod, OAuthAuthorization, OAuthCallbackResult } from "./types.js";

/** What the methods need. */
export interface AuthMethodOptions {
  apiUrl: string;
  websiteUrl: string;
  paths: PathEnvironment;
  fetch?: FetchLike;
  now?: () => number;
  /** Poll schedule override (tests). */
  pollDelayMs?: (attempt: number) => number;
  /** Import override (tests). */
  importOptions?: Partial<ImportOptions>;
}

function success(pair: { accessToken: string; refreshToken: string }, now: number): OAuthCallbackResult {
  const record = oauthRecord(pair, now);
  return record.type === "oauth"
    ? { type: "success", refresh: record.refresh, access: record.access, expires: record.expires }
    : { type: "failed" };
}

/** "Log in with Cursor": the browser PKCE flow. */
export function browserLogin(options: AuthMethodOptions): AuthMethod {
  const now = options.now ?? Date.now;
  return {
    type: "oauth",
    label: "Log in with Cursor (browser)",
    async authorize(): Promise<OAuthAuthorization> {
      const pair = await createPkcePair();
      return {
        url: buildLoginUrl(options.websiteUrl, pair),
        instructions: "Open the link, approve the login on cursor.com; OpenCode continues once it is approved.",
        method: "auto",
        async callback() {
          try {
            const tokens = await pollForLogin({
              apiUrl: options.apiUrl,
              uuid: pair.uuid,
              verifier: pair.verifier,
              now,
              ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
              ...(options.pollDelayMs === undefined ? {} : { delayMs: options.pollDelayMs }),
            });
            return success(tokens, now());
          } catch {
            return { type: "failed" };
          }
        },
      };
    },
  };
}

/**
 * "Cursor API key": OpenCode asks for the key itself, once and masked ("Enter your API key"), and stores it. A method
 * with prompts of its own would be asked in clear text first, and OpenCode hands `authorize` only those prompts'
 * answers, never the masked key, so the key is checked on first use instead: a key Cursor rejects fails the request
 * with Cursor's reason and what to do (tokens.ts), not OpenCode's bare "Failed to authorize".
 */
export function apiKeyLogin(_options: AuthMethodOptions): AuthMethod {
  return { type: "api", label: "Cursor API key (cursor.com → Dashboard → Integrations → User API Keys)" };
}

/** True when the Cursor CLI's or IDE's credential files exist (the keychain is only looked at on macOS). */
export function cursorCredentialsPresent(paths: PathEnvironment): boolean {
  return paths.platform === "darwin" || existsSync(cursorCliAuthFile(paths)) || existsSync(cursorIdeStateDb(paths));
}

/** "Use the Cursor CLI / IDE login": takes the best credentials Cursor's own clients hold. */
export function importLogin(options: AuthMethodOptions): AuthMethod {
  const now = options.now ?? Date.now;
  return {
    type: "oauth",
    label: "Use the login of the Cursor CLI or IDE",
    async authorize(): Promise<OAuthAuthorization> {
      const { report, credentials } = await findExistingCredentials({
        paths: options.paths,
        now,
        ...options.importOptions,
      });
      if (credentials === undefined) {
        const looked = report.candidates.map((c) => `${c.location}: ${c.problem ?? c.status}`).join("; ");
        return {
          url: "",
          instructions: `No usable Cursor login found (${looked}). Log in to the Cursor CLI or IDE first, or choose another method.`,
          method: "auto",
          callback: async () => ({ type: "failed" }),
        };
      }
      const who = credentials.email === undefined ? "" : ` for ${credentials.email}`;
      return {
        url: "",
        instructions: `Using the Cursor ${credentials.source === "import:ide" ? "IDE" : "CLI"} login${who}.`,
        method: "auto",
        // An API key outlives any session; otherwise the token pair, which the plugin refreshes from now on.
        callback: async () =>
          credentials.apiKey === undefined ? success(credentials, now()) : { type: "success", key: credentials.apiKey },
      };
    },
  };
}

/** The methods offered, in order. */
export function authMethods(options: AuthMethodOptions): AuthMethod[] {
  const methods = [browserLogin(options), apiKeyLogin(options)];
  if (cursorCredentialsPresent(options.paths)) methods.push(importLogin(options));
  return methods;
}
