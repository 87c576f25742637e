/**
 * Which upstream `serve` uses, decided from the configuration and the credentials alone (no protocol code loaded),
 * so the server can bind its port and print its banner, which names the upstream, before it loads the rest.
 */
import { ProxyError } from "../util/errors.js";
import type { ReservedListener } from "../util/reserved-listener.js";
import type { CliContext, ResolvedCredentials } from "./context.js";

/** A named Cursor account's login (issue #29), besides the default account's. */
export interface NamedLogin {
  name: string;
  credentials: ResolvedCredentials;
}

/**
 * Cursor with these credentials (the default account's) and, for `serve`, every other account's login; or the
 * embedded emulator (optionally on a port bound in advance).
 */
export type UpstreamChoice =
  | { kind: "cursor"; credentials: ResolvedCredentials; named?: readonly NamedLogin[] | undefined }
  | { kind: "emulator"; listener?: ReservedListener | undefined };

/** The logins of the accounts other than the context's (the default one). */
async function namedLogins(ctx: CliContext): Promise<NamedLogin[]> {
  const logins: NamedLogin[] = [];
  for (const entry of await ctx.accounts.list()) {
    if (entry.name === ctx.account) continue;
    const credentials = await ctx.forAccount(entry.name).resolveCredentials();
    if (credentials !== undefined) logins.push({ name: entry.name, credentials });
  }
  return logins;
}

/**
 * `config.upstream` decides (auto: Cursor when credentials exist, else the emulator). With `accounts` (serve), the
 * other named accounts' logins come along; named logins without one for the default account are refused rather
 * than served, since requests that name no account would have no login to run on.
 */
export async function chooseUpstream(ctx: CliContext, options: { accounts?: boolean } = {}): Promise<UpstreamChoice> {
  const { config } = ctx;
  const credentials = config.upstream === "emulator" ? undefined : await ctx.resolveCredentials();
  const named = options.accounts === true && config.upstream !== "emulator" ? await namedLogins(ctx) : [];
  if (credentials !== undefined) return { kind: "cursor", credentials, named };
  if (named.length > 0) {
    throw new ProxyError(
      "unauthenticated",
      `The default account \`${ctx.account}\` has no Cursor login, but ${named.map((login) => login.name).join(", ")} ${named.length === 1 ? "has" : "have"} one: log the default in (\`cursor-bridge login${ctx.account === "default" ? "" : ` --account ${ctx.account}`}\`) or make one of them the default (\`cursor-bridge accounts default NAME\`), then start again.`,
      { detail: "not_logged_in" },
    );
  }
  if (config.upstream === "cursor") {
    throw new ProxyError(
      "unauthenticated",
      "--upstream cursor needs Cursor credentials: run `cursor-bridge login` first.",
    );
  }
  return { kind: "emulator" };
}
