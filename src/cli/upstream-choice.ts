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

/** What `serve` does with these settings and logins: the one decision `serve`, `status` and `doctor` share. */
export type ServePlan =
  | { kind: "cursor" }
  | { kind: "emulator" }
  /** `serve` refuses to start (exit 3), with this error. */
  | { kind: "refused"; error: ProxyError };

/**
 * `config.upstream` decides (auto: Cursor when the default account has a login, else the emulator); named logins
 * without one for the default account are refused rather than served, since requests that name no account would
 * have no login to run on, and `--upstream cursor` without a login is refused.
 */
export function planServe(
  ctx: Pick<CliContext, "config" | "account">,
  hasDefaultLogin: boolean,
  namedWithLogins: readonly string[],
): ServePlan {
  const { config } = ctx;
  if (config.upstream === "emulator") return { kind: "emulator" };
  if (hasDefaultLogin) return { kind: "cursor" };
  if (namedWithLogins.length > 0) {
    return {
      kind: "refused",
      error: new ProxyError(
        "unauthenticated",
        `The default account \`${ctx.account}\` has no Cursor login, but ${namedWithLogins.join(", ")} ${namedWithLogins.length === 1 ? "has" : "have"} one: log the default in (\`cursor-bridge login${ctx.account === "default" ? "" : ` --account ${ctx.account}`}\`) or make one of them the default (\`cursor-bridge accounts default NAME\`), then start again.`,
        { detail: "not_logged_in" },
      ),
    };
  }
  if (config.upstream === "cursor") {
    return {
      kind: "refused",
      error: new ProxyError(
        "unauthenticated",
        "--upstream cursor needs Cursor credentials: run `cursor-bridge login` first.",
      ),
    };
  }
  return { kind: "emulator" };
}

/**
 * What `serve` would do now, for `status` and `doctor`: the default account's login as resolved (pass it when
 * already resolved) and every other account's.
 */
export async function servePlanOf(ctx: CliContext, credentials: ResolvedCredentials | undefined): Promise<ServePlan> {
  const named = ctx.config.upstream === "emulator" ? [] : await namedLogins(ctx);
  return planServe(
    ctx,
    credentials !== undefined,
    named.map((login) => login.name),
  );
}

/**
 * `config.upstream` decides (see {@link planServe}). With `accounts` (serve), the other named accounts' logins come
 * along.
 */
export async function chooseUpstream(ctx: CliContext, options: { accounts?: boolean } = {}): Promise<UpstreamChoice> {
  const { config } = ctx;
  const credentials = config.upstream === "emulator" ? undefined : await ctx.resolveCredentials();
  const named = options.accounts === true && config.upstream !== "emulator" ? await namedLogins(ctx) : [];
  const plan = planServe(
    ctx,
    credentials !== undefined,
    named.map((login) => login.name),
  );
  if (plan.kind === "refused") throw plan.error;
  if (plan.kind === "cursor" && credentials !== undefined) return { kind: "cursor", credentials, named };
  return { kind: "emulator" };
}

/**
 * `acp`'s upstream: `serve`'s choice, except that `auto` without a login is refused as unauthenticated (the editor gets
 * ACP's auth-required error and offers its login) instead of running on the emulator: an editor hides the agent's
 * stderr, where `serve` says loudly that it serves the emulator, so its scripted replies would pass for Cursor's. The
 * emulator runs only when asked for (`--upstream emulator`, `CURSOR_BRIDGE_UPSTREAM=emulator`, the config file).
 */
export async function chooseAcpUpstream(ctx: CliContext): Promise<UpstreamChoice> {
  const choice = await chooseUpstream(ctx);
  if (choice.kind === "emulator" && ctx.config.upstream !== "emulator") {
    throw new ProxyError(
      "unauthenticated",
      "Not logged in to Cursor: log in with one of this agent's authentication methods (or run `cursor-bridge login`), or start it with `--upstream emulator` to try it on the built-in Cursor emulator.",
      { detail: "not_logged_in" },
    );
  }
  return choice;
}
