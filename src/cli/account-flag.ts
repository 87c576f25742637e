/**
 * What the commands that touch one login share for named Cursor accounts (issue #29): the `--account NAME` option,
 * choosing the account's context from it, and writing logins and logouts to the team gateway's audit log (the one
 * passed in, else the one `serve`, `keys` and `audit` use on the same `--store` / `--data-dir`).
 */
import { checkAccountName } from "../stores/accounts.js";
import type { JsonValue } from "../util/json-value.js";
import type { CliContext } from "./context.js";
import { cliActor, openGatewayCli } from "./gateway-context.js";

/** The `--account` option of login, import and logout. */
export const ACCOUNT_OPTION = { account: { type: "string" } } as const;

/** Its line in the commands' help. */
export const ACCOUNT_OPTION_HELP = `  --account <name>     The named Cursor account (lowercase letters, digits, '.', '_', '-'), kept beside the others;
                       without it, the default account (\`cursor-bridge accounts\` lists them)`;

/** The context of the account `--account` names, or `ctx` itself without the option. */
export function selectAccount(ctx: CliContext, values: Readonly<Record<string, string | boolean | undefined>>) {
  const name = values.account;
  if (typeof name !== "string") return ctx;
  return ctx.forAccount(checkAccountName(name));
}

/**
 * Appends `action` on the context's account to the audit log: the context's, else the gateway's on the command's store
 * (opened for this one entry). A failure to write it is reported on stderr; what was done stays done (the login
 * already happened).
 */
export async function audit(
  ctx: CliContext,
  action: "login" | "logout",
  detail: { [key: string]: JsonValue } = {},
): Promise<void> {
  try {
    if (ctx.audit !== undefined) {
      const { actor, from } = cliActor(ctx.io.env);
      await ctx.audit.append({
        at: new Date(ctx.now()).toISOString(),
        actor,
        action,
        target: ctx.account,
        from,
        detail,
      });
      return;
    }
    const gateway = await openGatewayCli(ctx);
    try {
      await gateway.audit.append({
        at: new Date(ctx.now()).toISOString(),
        ...gateway.actor,
        action,
        target: ctx.account,
        detail,
      });
    } finally {
      await gateway.close();
    }
  } catch (error) {
    ctx.io.err(
      `${ctx.style.yellow("Warning:")} could not write the audit log (${error instanceof Error ? error.message : String(error)}).\n`,
    );
  }
}
