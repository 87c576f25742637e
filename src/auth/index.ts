/** Public surface of auth/ for the composition roots (cli/, server/, plugin/); the credential stores are in src/stores/. */
export { createMemoryCredentialStore } from "../stores/memory/credential-store.js";
export type {
  CredentialSource,
  CredentialStore,
  CredentialsInput,
  SaveOptions,
  StoredCredentials,
} from "../stores/types.js";
export { createExchange, type ExchangeFunction, exchangeForTokens } from "./exchange.js";
export type { FetchLike, TokenPair } from "./http.js";
export {
  findExistingCredentials,
  type ImportCandidateReport,
  type ImportedCredentials,
  type ImportOptions,
  type ImportReport,
  type ImportResult,
} from "./import.js";
export type { CommandRunner } from "./import-sources.js";
export {
  type ApiKeyLoginOptions,
  type BrowserLoginOptions,
  type CredentialStatus,
  describeCredentials,
  type ImportLoginResult,
  importCredentials,
  loginWithApiKey,
  loginWithBrowser,
  readCredentialStatus,
} from "./login.js";
export { type LoginTokens, officialPollDelayMs, type PollProgress, pollForLogin } from "./login-poll.js";
export { buildLoginUrl, createPkcePair, type PkcePair, pkceChallenge } from "./pkce.js";
export {
  createRefreshingTokenSource,
  createStaticTokenSource,
  DEFAULT_CURSOR_API_URL,
  DEFAULT_REFRESH_SKEW_MS,
  type RefreshingTokenSource,
  type RefreshingTokenSourceOptions,
} from "./token-source.js";
