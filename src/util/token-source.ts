/**
 * The token contract between auth/ (which implements it) and backend/ (which receives it by injection). It lives in
 * util/ so neither layer imports the other.
 */

/** Supplies the current Cursor access token. */
export interface TokenSource {
  /** A valid access token, refreshed if close to expiry. */
  getAccessToken(signal?: AbortSignal): Promise<string>;
  /** Called after the upstream said `unauthenticated`: force one refresh; resolves to the new token. */
  refreshAfterUnauthenticated(rejectedToken: string, signal?: AbortSignal): Promise<string>;
}
