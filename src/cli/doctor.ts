/**
 * `cursor-bridge doctor`: checks everything a working bridge needs (Node.js, credentials, token, upstream over
 * HTTP/2 and HTTP/1.1, directories, port) and prints what to fix. Exit code 1 when any check fails.
 */
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { type CliContext, createCliContext, DEFAULT_CURSOR_API_URL } from "./context.js";
import {
  type CheckResult,
  type CheckStatus,
  checkClientVersion,
  checkCredentials,
  checkDirectory,
  checkLoginUrl,
  checkNodeVersion,
  checkPort,
  checkProbe,
  checkToken,
  type PortTarget,
} from "./doctor-checks.js";
import { checkOpenCodePlugin } from "./doctor-opencode.js";
import { checkStore } from "./doctor-store.js";
import type { CliIo, Style } from "./io.js";
import { probeHttp1, probeHttp2 } from "./probe.js";
import { findRunningServer, portGiven } from "./runtime-file.js";
import { servePlanOf } from "./upstream-choice.js";

const HELP = `Usage: cursor-bridge doctor [options]

Check the setup and print what to fix:
  - the Node.js version
  - the stored credentials, their file permissions and the Cursor URL the login was made against
  - whether Cursor accepts the token, and whether the Cursor API answers over HTTP/2 and over HTTP/1.1 (not
    contacted while \`serve\` answers with the built-in emulator, i.e. without a login)
  - the data and config directories
  - the store (--store): the data directory, or a shared Redis (reachable, writable, instances running)
  - the version string sent to Cursor
  - the OpenCode plugin entries of opencode.json, when one names cursor-bridge
  - whether a cursor-bridge serves its port (without --port, the port a running \`serve\` recorded in its runtime
    file, else the configured one), or else whether \`serve\` could listen there

Exit codes: 0 nothing failed (warnings allowed), 1 at least one check failed, 2 bad options or config.

Options:
  --port <n>    Port to check (default: the running server's, else the configured port, 8765)
  --host <addr> Interface to check the port on (default 127.0.0.1)

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge doctor
  cursor-bridge doctor --port 9000
  cursor-bridge doctor --json | jq '.checks[] | select(.status == "fail")'
`;

const PROBE_TIMEOUT_MS = 5_000;

/** The address to check: the configured one, or where a running `serve` recorded it listens when no port was given. */
async function portTarget(ctx: CliContext, explicit: boolean): Promise<PortTarget> {
  const configured = { host: ctx.config.host, port: ctx.config.port, explicit };
  if (explicit) return configured;
  const running = await findRunningServer(ctx.config.dataDir);
  return running === undefined ? configured : { host: running.host, port: running.port, explicit, recorded: true };
}

/** Runs every check; independent ones run in parallel. */
export async function runChecks(ctx: CliContext, explicitPort = false): Promise<CheckResult[]> {
  const url = ctx.config.cursorApiUrl;
  const credentialCheck = await checkCredentials(ctx);
  // `serve` answers with the built-in emulator: without a login (auto), or always with --upstream emulator. Cursor's
  // servers are then not needed, and not contacted; a URL configured by hand is still probed, as a warning at worst.
  // Decided as `serve` decides (named accounts' logins included); an unreadable credential file is not the emulator.
  const plan =
    credentialCheck.result.status === "fail" && credentialCheck.credentials === undefined
      ? undefined
      : await servePlanOf(ctx, credentialCheck.credentials);
  const emulated = plan?.kind === "emulator";
  const refusal: CheckResult | undefined =
    plan?.kind === "refused"
      ? {
          id: "serve",
          title: "Serve",
          status: "fail",
          detail: "`cursor-bridge serve` refuses to start with these logins (exit 3)",
          fix: plan.error.message,
        }
      : undefined;
  const skipProbes = emulated && url === DEFAULT_CURSOR_API_URL;
  const [http2, http1] = skipProbes
    ? [undefined, undefined]
    : await Promise.all([probeHttp2(url, PROBE_TIMEOUT_MS), probeHttp1(url, PROBE_TIMEOUT_MS)]);
  const [token, dataDir, configDir, port, store] = await Promise.all([
    ctx.config.upstream === "emulator"
      ? Promise.resolve<CheckResult>({
          id: "token",
          title: "Token",
          status: "skip",
          detail: "not checked: --upstream emulator serves the built-in emulator",
        })
      : checkToken(ctx, credentialCheck.credentials),
    checkDirectory(ctx, "data-dir", "Data directory", ctx.config.dataDir),
    checkDirectory(ctx, "config-dir", "Config directory", ctx.config.configDir),
    checkPort(await portTarget(ctx, explicitPort)),
    checkStore(ctx),
  ]);
  const openCodePlugin = checkOpenCodePlugin({ env: ctx.io.env, homedir: ctx.paths.homedir });
  const probes =
    http2 === undefined || http1 === undefined
      ? (["http2", "http1"] as const).map(
          (protocol): CheckResult => ({
            id: `upstream-${protocol}`,
            title: `Upstream ${protocol === "http2" ? "HTTP/2" : "HTTP/1.1"}`,
            status: "skip",
            detail: `${url} not contacted: \`cursor-bridge serve\` answers with the built-in emulator until you log in`,
          }),
        )
      : [checkProbe(ctx, http2, http1), checkProbe(ctx, http1, http2)].map((check) =>
          emulated && check.status === "fail" ? { ...check, status: "warn" as const } : check,
        );
  const loginUrl = checkLoginUrl(ctx);
  const clientVersion = await checkClientVersion(ctx, emulated ? undefined : credentialCheck.credentials);
  return [
    checkNodeVersion(),
    // Without a login of the default account, serve answers with the emulator only when no other account has one.
    refusal === undefined
      ? credentialCheck.result
      : { ...credentialCheck.result, status: "fail", detail: `not logged in (no ${ctx.store.location})` },
    ...(refusal === undefined ? [] : [refusal]),
    ...(loginUrl === undefined ? [] : [loginUrl]),
    token,
    ...probes,
    clientVersion,
    configDir,
    dataDir,
    store,
    port,
    ...(openCodePlugin.status === "skip" ? [] : [openCodePlugin]),
  ];
}

function badge(status: CheckStatus, style: Style): string {
  if (status === "ok") return style.green("[ ok ]");
  if (status === "info") return style.cyan("[info]");
  if (status === "warn") return style.yellow("[warn]");
  if (status === "fail") return style.red("[fail]");
  return style.dim("[skip]");
}

/** The human report. */
export function formatChecks(checks: readonly CheckResult[], style: Style): string {
  const width = Math.max(...checks.map((check) => check.title.length));
  const lines = checks.map((check) => {
    const line = `${badge(check.status, style)} ${check.title.padEnd(width)}  ${check.detail}\n`;
    const showFix = check.fix !== undefined && (check.status === "fail" || check.status === "warn");
    return showFix ? `${line}       ${" ".repeat(width)}  ${style.cyan(`fix: ${check.fix}`)}\n` : line;
  });
  const failed = checks.filter((check) => check.status === "fail").length;
  const warned = checks.filter((check) => check.status === "warn").length;
  const summary =
    failed > 0
      ? style.red(`${failed} check(s) failed${warned > 0 ? `, ${warned} warning(s)` : ""}; see the fixes above.`)
      : style.green(warned > 0 ? `No failures, ${warned} warning(s).` : "All checks passed.");
  return `${lines.join("")}\n${summary}\n`;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags } = parseCommandLine("doctor", argv);
  const ctx = await createCliContext(io, flags);
  const checks = await runChecks(ctx, portGiven(flags.config, io.env, ctx.config.port));
  const ok = !checks.some((check) => check.status === "fail");
  if (ctx.json) ctx.printJson({ ok, checks });
  else io.out(formatChecks(checks, ctx.style));
  return ok ? EXIT.ok : EXIT.failure;
}

/** `cursor-bridge doctor`. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the setup and print what to fix",
  help: HELP,
  options: {},
  run,
};
