/**
 * `cursor-bridge audit`: the team gateway's audit log (key create, rotate and revoke, logins and logouts, admin API
 * calls), from the store `serve` uses: `audit.log` in the data directory, or the Redis stream.
 */
import { ProxyError } from "../util/errors.js";
import { COMMON_OPTIONS_HELP, type OptionSpec, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import { openGatewayCli } from "./gateway-context.js";
import { type CliIo, formatTable } from "./io.js";

const OPTIONS: OptionSpec = { limit: { type: "string" } };

const HELP = `Usage: cursor-bridge audit [--limit N] [--json] [options]

Show the audit log, oldest first: who did what, when and from where (key create, rotate and revoke from the CLI or
the admin API, every admin API call, logins and logouts). It never holds key or token material.

Options:
  --limit N                 The newest N entries (default 50; 0 = all)
  --store file|redis://…    The store serve uses (file: audit.log in the data directory, and audit.log.1, the
                            one before it: the file is rotated at 16 MiB)
  --data-dir <dir>          The data directory (file store)

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge audit
  cursor-bridge audit --limit 500 --json | jq '.entries[] | select(.action == "key.revoke")'
`;

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags, values } = parseCommandLine("audit", argv, OPTIONS);
  const text = typeof values.limit === "string" ? values.limit : "50";
  if (!/^\d+$/.test(text.trim())) {
    throw new ProxyError("invalid_request", "Invalid --limit: expected a whole number (0 = all entries).", {
      param: "limit",
    });
  }
  const limit = Number(text);
  const ctx = await createCliContext(io, flags);
  const gateway = await openGatewayCli(ctx);
  try {
    const entries = await gateway.audit.read(limit === 0 ? {} : { limit });
    if (ctx.json) {
      ctx.printJson({ entries, location: gateway.auditLocation });
    } else if (entries.length === 0) {
      io.out(`The audit log is empty (${gateway.auditLocation}).\n`);
    } else {
      const rows = entries.map((entry) => [
        entry.at,
        entry.actor,
        entry.action,
        entry.target ?? "-",
        entry.from ?? "-",
        entry.detail === undefined ? "" : JSON.stringify(entry.detail),
      ]);
      io.out(formatTable(["WHEN", "WHO", "WHAT", "TARGET", "FROM", "DETAIL"], rows));
    }
  } finally {
    await gateway.close();
  }
  return EXIT.ok;
}

/** `cursor-bridge audit`. */
export const auditCommand: Command = {
  name: "audit",
  summary: "Show the team gateway's audit log",
  help: HELP,
  options: OPTIONS,
  run,
};
