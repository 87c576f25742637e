/**
 * `cursor-bridge logout`: removes the stored credential file. Credentials given through the environment are not
 * ours to remove, so the command says they are still set.
 */
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import type { CliIo } from "./io.js";

const HELP = `Usage: cursor-bridge logout [options]

Remove the stored Cursor credentials (<configDir>/credentials.json). A corrupt or foreign file at that path is
removed too. Credentials in CURSOR_ACCESS_TOKEN or CURSOR_API_KEY are not affected; unset them yourself.

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge logout
  cursor-bridge logout --json
`;

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags } = parseCommandLine("logout", argv);
  const ctx = await createCliContext(io, flags);
  const removed = await ctx.store.clear();
  const stillSet = (["CURSOR_ACCESS_TOKEN", "CURSOR_API_KEY"] as const).filter(
    (name) => (name === "CURSOR_ACCESS_TOKEN" ? ctx.config.cursorAccessToken : ctx.config.cursorApiKey) !== undefined,
  );
  if (ctx.json) {
    ctx.printJson({ removed, location: ctx.store.location, environmentCredentials: stillSet });
    return EXIT.ok;
  }
  io.out(
    removed
      ? `Logged out: removed ${ctx.store.location}.\n`
      : `Already logged out (no credentials at ${ctx.store.location}).\n`,
  );
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
  run,
};
