/**
 * `cursor-bridge logout`: removes the stored credential file. Credentials given through the environment are not
 * ours to remove, so the command says they are still set.
 */

import { ACCOUNT_OPTION, ACCOUNT_OPTION_HELP, audit, selectAccount } from "./account-flag.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { type CliContextOverrides, createCliContext } from "./context.js";
import type { CliIo } from "./io.js";

const HELP = `Usage: cursor-bridge logout [options]

Remove the stored Cursor credentials (<configDir>/credentials.json, or with --account NAME that account's
<configDir>/accounts/NAME.json; the other accounts stay). A corrupt or foreign file at that path is removed too.
Credentials in CURSOR_ACCESS_TOKEN or CURSOR_API_KEY are not affected; unset them yourself.

Options:
${ACCOUNT_OPTION_HELP}

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge logout
  cursor-bridge logout --json
  cursor-bridge logout --account alice
`;

/** `logout` with the context's overrides (the audit log). */
export async function runLogout(argv: string[], io: CliIo, overrides: CliContextOverrides = {}): Promise<number> {
  const { flags, values } = parseCommandLine("logout", argv, ACCOUNT_OPTION);
  const base = await createCliContext(io, flags, overrides);
  const ctx = selectAccount(base, values);
  const removed = await ctx.store.clear();
  if (removed) await audit(ctx, "logout");
  // The environment's credentials stand for the default account only.
  const stillSet = (["CURSOR_ACCESS_TOKEN", "CURSOR_API_KEY"] as const).filter(
    (name) =>
      ctx.account === base.account &&
      (name === "CURSOR_ACCESS_TOKEN" ? ctx.config.cursorAccessToken : ctx.config.cursorApiKey) !== undefined,
  );
  if (ctx.json) {
    ctx.printJson({ removed, account: ctx.account, location: ctx.store.location, environmentCredentials: stillSet });
    return EXIT.ok;
  }
  io.out(
    removed
      ? `Logged out: removed ${ctx.store.location}.\n`
      : `Already logged out (no credentials at ${ctx.store.location}).\n`,
  );
  const others = removed && ctx.account === base.account ? (await ctx.accounts.list()).length : 0;
  if (others > 0) {
    io.out(
      `${ctx.style.yellow("Note:")} ${ctx.account} was the default account: requests that name no account fail until you log it in again or choose another with \`cursor-bridge accounts default NAME\`.\n`,
    );
  }
  if (stillSet.length > 0) {
    io.out(
      `${ctx.style.yellow("Note:")} ${stillSet.join(" and ")} still set in the environment; unset to log out fully.\n`,
    );
  }
  return EXIT.ok;
}

/** `cursor-bridge logout`. */
export const logoutCommand: Command = {
  name: "logout",
  summary: "Remove the stored Cursor credentials",
  help: HELP,
  options: ACCOUNT_OPTION,
  run: (argv, io) => runLogout(argv, io),
};
