/**
 * `cursor-bridge accounts`: the named Cursor accounts kept side by side (issue #29) and which one is the default,
 * and `accounts default NAME` to choose it. Reads the stored records only (no token is refreshed or printed).
 */
import { checkAccountName } from "../stores/accounts.js";
import type { AccountEntry } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { type CliContext, createCliContext } from "./context.js";
import { shortDate, sourceLabel } from "./format.js";
import { type CliIo, formatTable } from "./io.js";

const HELP = `Usage: cursor-bridge accounts [options]
       cursor-bridge accounts default NAME [options]

List the Cursor accounts cursor-bridge holds logins for, and which one is the default: the account requests run on
when they name none (a virtual key without --account, or any request when no keys are defined). \`default\` is the
login \`cursor-bridge login\` always kept (<configDir>/credentials.json); named ones come from
\`cursor-bridge login --account NAME\` (or \`import --account NAME\`) and live in <configDir>/accounts/NAME.json.

  accounts default NAME   Make NAME (an account with a login) the default. A running server picks it up when it
                          restarts.

A turn never moves to another account: a request for an account without a login is refused.

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge accounts
  cursor-bridge accounts --json | jq -r '.accounts[].name'
  cursor-bridge accounts default alice
`;

/** One account as `accounts --json` prints it. */
export interface AccountReport extends AccountEntry {
  default: boolean;
}

/** The accounts and the default, as printed. */
export async function accountReport(ctx: CliContext): Promise<{ defaultAccount: string; accounts: AccountReport[] }> {
  const defaultAccount = await ctx.accounts.defaultAccount();
  const accounts = (await ctx.accounts.list()).map((entry) => ({ ...entry, default: entry.name === defaultAccount }));
  return { defaultAccount, accounts };
}

/** The 400 of a name without a login (says which accounts exist). */
export function noSuchAccount(name: string, known: readonly AccountEntry[]): ProxyError {
  const list = known.length === 0 ? "none yet" : known.map((entry) => entry.name).join(", ");
  return new ProxyError(
    "invalid_request",
    `There is no login for the account \`${name}\` (accounts: ${list}). Log it in first: \`cursor-bridge login --account ${name}\`.`,
    { param: "account" },
  );
}

/**
 * Checks that `name` is an account with a login (e.g. before a virtual key is bound to it with `--account`).
 * @throws ProxyError `invalid_request` for a bad name or one without a login, naming the accounts that exist.
 */
export async function requireAccount(ctx: CliContext, name: string): Promise<AccountEntry> {
  checkAccountName(name);
  const known = await ctx.accounts.list();
  const entry = known.find((each) => each.name === name);
  if (entry === undefined) throw noSuchAccount(name, known);
  return entry;
}

async function list(ctx: CliContext): Promise<number> {
  const { defaultAccount, accounts } = await accountReport(ctx);
  if (ctx.json) {
    ctx.printJson({ defaultAccount, location: ctx.accounts.location, accounts });
    return EXIT.ok;
  }
  if (accounts.length === 0) {
    ctx.io.out(`No Cursor logins yet. Run \`cursor-bridge login\` (or \`login --account NAME\`).\n`);
  } else {
    const rows = accounts.map((entry) => [
      entry.default ? `${entry.name} *` : entry.name,
      entry.email ?? entry.userId ?? "an unknown user",
      sourceLabel(entry.source),
      shortDate(entry.savedAt),
    ]);
    ctx.io.out(formatTable(["ACCOUNT", "WHO", "SOURCE", "SAVED"], rows));
  }
  if (!accounts.some((entry) => entry.default)) {
    ctx.io.out(
      `${ctx.style.yellow("Note:")} the default account \`${defaultAccount}\` has no login: requests that name no account fail until you log it in or choose another with \`cursor-bridge accounts default NAME\`.\n`,
    );
  } else {
    ctx.io.out(ctx.style.dim("* the default account (requests that name no account run on it)\n"));
  }
  return EXIT.ok;
}

async function choose(ctx: CliContext, name: string): Promise<number> {
  await requireAccount(ctx, name);
  await ctx.accounts.setDefaultAccount(name);
  if (ctx.json) ctx.printJson({ defaultAccount: name });
  else {
    ctx.io.out(
      `Default account: ${ctx.style.bold(name)}. Requests that name no account run on it (restart a running server).\n`,
    );
  }
  return EXIT.ok;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  if (argv[0] === "default") {
    const name = argv[1];
    if (name === undefined || name.startsWith("-")) {
      throw new ProxyError("invalid_request", "Name the account: `cursor-bridge accounts default NAME`.");
    }
    const { flags } = parseCommandLine("accounts", argv.slice(2));
    return choose(await createCliContext(io, flags), name);
  }
  const first = argv[0];
  if (first !== undefined && !first.startsWith("-")) {
    const shown = /^[a-z][a-z-]{0,24}$/.test(first) ? `\`${first}\`` : "(the argument is not shown)";
    throw new ProxyError(
      "invalid_request",
      `Unknown accounts command ${shown}: use \`cursor-bridge accounts\` or \`cursor-bridge accounts default NAME\`.`,
    );
  }
  const { flags } = parseCommandLine("accounts", argv);
  return list(await createCliContext(io, flags));
}

/** `cursor-bridge accounts`. */
export const accountsCommand: Command = {
  name: "accounts",
  summary: "List the named Cursor accounts; choose the default one",
  help: HELP,
  options: {},
  run,
};
