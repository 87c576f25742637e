/**
 * `cursor-bridge import`: reuses the credentials Cursor's own clients already hold (docs/protocol.md §3.4): the
 * cursor-agent CLI's auth.json or macOS keychain items, or the Cursor IDE's state.vscdb. Reports what was found where,
 * never the tokens themselves (the import report carries none).
 */
import { type ImportCandidateReport, type ImportReport, importCredentials } from "../auth/index.js";
import { ACCOUNT_OPTION, ACCOUNT_OPTION_HELP, audit, selectAccount } from "./account-flag.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import {
  announceInvalidCredentialFile,
  type CliContext,
  type CliContextOverrides,
  createCliContext,
} from "./context.js";
import { expiryText, identityOf, sourceLabel } from "./format.js";
import { type CliIo, formatFields, formatTable } from "./io.js";

const HELP = `Usage: cursor-bridge import [options]

Copy an existing Cursor session into cursor-bridge instead of logging in again. Looks in:
  - the Cursor CLI (cursor-agent): auth.json (~/.config/cursor/auth.json on Linux, ~/.cursor/auth.json on macOS,
    %APPDATA%\\Cursor\\auth.json on Windows) and, on macOS, its keychain items
  - the Cursor IDE: state.vscdb in its globalStorage folder (cursorAuth/accessToken, cursorAuth/refreshToken)
The unexpired session with the latest expiry wins. When every session found has expired, the latest one that can
be renewed (it has a refresh token or API key) is imported and renewed on first use; an expired session that cannot
be renewed is never imported. Tokens are never printed.

Options:
${ACCOUNT_OPTION_HELP}

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge import
  cursor-bridge import --json
  cursor-bridge import --account alice   # as the named account alice, beside the default one
`;

const ORIGIN_LABEL: Record<ImportCandidateReport["origin"], string> = {
  "cli-file": "Cursor CLI auth.json",
  "cli-keychain": "Cursor CLI keychain",
  "ide-state": "Cursor IDE state.vscdb",
};

function candidateDetail(candidate: ImportCandidateReport, now: number): string {
  const parts: string[] = [];
  if (candidate.keys.length > 0) parts.push(`keys: ${candidate.keys.join(", ")}`);
  if (candidate.email !== undefined || candidate.userId !== undefined) parts.push(`user: ${identityOf(candidate)}`);
  if (candidate.expiresAt !== undefined) parts.push(expiryText(candidate, now));
  if (candidate.problem !== undefined) parts.push(candidate.problem);
  return parts.join("; ");
}

function printReport(ctx: CliContext, report: ImportReport): void {
  const rows = report.candidates.map((candidate) => [
    candidate.origin === report.chosen ? `${ORIGIN_LABEL[candidate.origin]} *` : ORIGIN_LABEL[candidate.origin],
    candidate.status,
    candidate.location,
  ]);
  ctx.io.out(formatTable(["SOURCE", "STATUS", "LOCATION"], rows));
  for (const candidate of report.candidates) {
    const detail = candidateDetail(candidate, ctx.now());
    if (detail !== "") ctx.io.out(`  ${ORIGIN_LABEL[candidate.origin]}: ${detail}\n`);
  }
  ctx.io.out("\n");
}

/** `import` with the context's overrides (the audit log). */
export async function runImport(argv: string[], io: CliIo, overrides: CliContextOverrides = {}): Promise<number> {
  const { flags, values } = parseCommandLine("import", argv, ACCOUNT_OPTION);
  const ctx = selectAccount(await createCliContext(io, flags, { ...overrides, useLoginUrl: false }), values);
  const overwriteInvalid = await announceInvalidCredentialFile(ctx, "Imported credentials will replace that file.");
  const { report, status } = await importCredentials({
    paths: ctx.paths,
    store: ctx.store,
    overwriteInvalid,
    now: ctx.now,
  });
  if (status !== undefined) await audit(ctx, "login", { source: status.source });
  if (ctx.json) {
    ctx.printJson({
      imported: status !== undefined,
      account: ctx.account,
      report,
      ...(status === undefined ? {} : { status }),
    });
    return status === undefined ? EXIT.unauthenticated : EXIT.ok;
  }
  printReport(ctx, report);
  if (status === undefined) {
    io.err("No usable Cursor credentials found. Run `cursor-bridge login` instead.\n");
    return EXIT.unauthenticated;
  }
  io.out(`${ctx.style.green("Imported; logged in as")} ${ctx.style.bold(identityOf(status))}\n`);
  if (status.expired === true) {
    io.out(
      `${ctx.style.yellow("The imported session has expired;")} cursor-bridge renews it with its refresh token on first use` +
        " (needs Cursor to be reachable). If Cursor refuses the renewal, run `cursor-bridge login`.\n",
    );
  }
  io.out(
    formatFields([
      ["Account", ctx.account],
      ["Source", sourceLabel(status.source)],
      ["Token", expiryText(status, ctx.now())],
      ["Saved to", `${status.location} (mode 0600)`],
    ]),
  );
  return EXIT.ok;
}

/** `cursor-bridge import`. */
export const importCommand: Command = {
  name: "import",
  summary: "Reuse the login of the Cursor CLI or IDE",
  help: HELP,
  options: ACCOUNT_OPTION,
  run: (argv, io) => runImport(argv, io),
};
