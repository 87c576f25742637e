/**
 * `cursor-bridge status`: who is logged in, until when, where the credentials come from, whether the upstream
 * answers, and which client version is sent. Reads the stored credentials without refreshing them.
 */
import type { CredentialStatus } from "../auth/index.js";
import { type AccountStatus, accountStatuses, resetText, usageText } from "./account-status.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { type CliContext, type CredentialOrigin, createCliContext, DEFAULT_CURSOR_API_URL } from "./context.js";
import { expiryText, identityOf, sourceLabel } from "./format.js";
import { type CliIo, formatFields, formatTable } from "./io.js";
import { describeProbe, type ProbeResult, probeHttp1, probeHttp2 } from "./probe.js";
import { type ServePlan, servePlanOf } from "./upstream-choice.js";

const HELP = `Usage: cursor-bridge status [options]

Show who is logged in, when the session token expires, where the credentials come from, whether the Cursor API
answers (and over which HTTP version; not asked while \`serve\` answers with the built-in emulator, i.e. without a
login), and the client version sent to Cursor. Then, for every stored Cursor account (the default one and those of
\`login --account NAME\`), who it is, this billing cycle's plan usage and when it resets.

Exit codes: 0 logged in and reachable, 3 not logged in, 4 upstream not reachable, 2 bad options or config.

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge status
  cursor-bridge status --json | jq .credentials.expiresAt
`;

const PROBE_TIMEOUT_MS = 5_000;

/** Probes the way the client would connect: the configured transport, or HTTP/2 then HTTP/1.1 for `auto`. */
export async function probeConfiguredTransport(ctx: CliContext): Promise<ProbeResult> {
  const url = ctx.config.cursorApiUrl;
  if (ctx.config.transport === "http1") return probeHttp1(url, PROBE_TIMEOUT_MS);
  const http2 = await probeHttp2(url, PROBE_TIMEOUT_MS);
  if (http2.reachable || ctx.config.transport === "http2") return http2;
  const http1 = await probeHttp1(url, PROBE_TIMEOUT_MS);
  return http1.reachable ? http1 : http2;
}

function originText(origin: CredentialOrigin, status: CredentialStatus | undefined): string {
  if (origin === "env-access-token") return "environment (CURSOR_ACCESS_TOKEN, not refreshed)";
  if (origin === "env-api-key") return "environment (CURSOR_API_KEY, exchanged on first use)";
  return status === undefined ? "credential file" : `${sourceLabel(status.source)}, ${status.location}`;
}

function printAccounts(ctx: CliContext, accounts: readonly AccountStatus[]): void {
  if (accounts.length === 0) return;
  const rows = accounts.map((account) => [
    account.default ? `${account.name} *` : account.name,
    account.email ?? account.userId ?? "an unknown user",
    usageText(account),
    resetText(account),
  ]);
  ctx.io.out(`\nAccounts (* = default):\n${formatTable(["ACCOUNT", "WHO", "PLAN USAGE", "RESETS"], rows)}`);
}

function printHuman(
  ctx: CliContext,
  credentials: { origin: CredentialOrigin; status: CredentialStatus | undefined } | undefined,
  probe: ProbeResult | undefined,
  plan: ServePlan,
): void {
  const { style } = ctx;
  const emulated = plan.kind === "emulator";
  const fields: [string, string][] = [];
  if (credentials === undefined) {
    const serves = emulated
      ? " `cursor-bridge serve` answers with the built-in emulator until then."
      : plan.kind === "refused"
        ? " `cursor-bridge serve` refuses to start until then (see Serve below)."
        : "";
    ctx.io.out(
      `${style.yellow("Not logged in.")} Run \`cursor-bridge login\` (or \`cursor-bridge import\`) to use your Cursor account.${serves}\n`,
    );
    fields.push(["Credentials", `none at ${ctx.store.location}`]);
  } else {
    const who = credentials.status === undefined ? "an API-key user" : identityOf(credentials.status);
    const id = credentials.status?.email !== undefined && credentials.status.userId !== undefined;
    ctx.io.out(`Logged in as ${style.bold(who)}${id ? ` (${credentials.status?.userId})` : ""}\n`);
    fields.push(["Credentials", originText(credentials.origin, credentials.status)]);
    if (credentials.status !== undefined) {
      const expiry = expiryText(credentials.status, ctx.now());
      const refreshable = credentials.origin === "store" && credentials.status.expired === true;
      fields.push(["Token", refreshable ? `${expiry}; refreshed on next use` : expiry]);
    }
  }
  if (probe === undefined) {
    fields.push(["Upstream", `the built-in emulator (${ctx.config.cursorApiUrl} not contacted)`]);
  } else {
    const reach = describeProbe(probe);
    const upstream = `${ctx.config.cursorApiUrl} — ${probe.reachable ? style.green(reach) : style.red(reach)}`;
    fields.push(["Upstream", emulated ? `${upstream} (serve answers with the built-in emulator)` : upstream]);
  }
  if (ctx.loginUrl !== undefined) {
    fields.push([
      "Login URL",
      ctx.loginUrl.used
        ? `${ctx.loginUrl.recorded} (the login was made there)`
        : `${ctx.loginUrl.recorded}: the login was made there, not at ${ctx.config.cursorApiUrl}; log in again or unset CURSOR_API_URL`,
    ]);
  }
  if (ctx.config.cursorAgentUrl !== ctx.config.cursorApiUrl) fields.push(["Agent URL", ctx.config.cursorAgentUrl]);
  fields.push(["Upstream mode", ctx.config.upstream]);
  if (plan.kind === "refused") fields.push(["Serve", style.red(`refuses to start: ${plan.error.message}`)]);
  fields.push(["Client version", `${ctx.clientVersion.version} (${ctx.clientVersion.source})`]);
  ctx.io.out(formatFields(fields));
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags } = parseCommandLine("status", argv);
  const ctx = await createCliContext(io, flags);
  const resolved = await ctx.resolveCredentials();
  const credentials = resolved === undefined ? undefined : { origin: resolved.origin, status: resolved.status };
  // What `serve` does, decided as `serve` decides: with the built-in emulator Cursor's own servers are not needed.
  const plan = await servePlanOf(ctx, resolved);
  const emulated = plan.kind === "emulator";
  const contacted = !(emulated && ctx.config.cursorApiUrl === DEFAULT_CURSOR_API_URL);
  const [probe, accounts] = await Promise.all([
    contacted ? probeConfiguredTransport(ctx) : Promise.resolve(undefined),
    accountStatuses(ctx),
  ]);
  if (ctx.json) {
    ctx.printJson({
      loggedIn: credentials !== undefined,
      account: ctx.account,
      accounts,
      credentials: credentials === undefined ? null : { origin: credentials.origin, ...credentials.status },
      credentialFile: ctx.store.location,
      upstream: {
        url: ctx.config.cursorApiUrl,
        agentUrl: ctx.config.cursorAgentUrl,
        mode: ctx.config.upstream,
        transport: ctx.config.transport,
        emulator: emulated,
        serve: plan.kind,
        ...(plan.kind === "refused" ? { serveRefusal: plan.error.message } : {}),
        contacted,
        ...(ctx.loginUrl === undefined ? {} : { loginUrl: ctx.loginUrl }),
        ...probe,
      },
      // Only the data: the healer object holds its options and logger.
      clientVersion: { version: ctx.clientVersion.version, source: ctx.clientVersion.source },
    });
  } else {
    printHuman(ctx, credentials, probe, plan);
    printAccounts(ctx, accounts);
  }
  if (credentials === undefined) return EXIT.unauthenticated;
  return probe === undefined || probe.reachable ? EXIT.ok : EXIT.unavailable;
}

/** `cursor-bridge status`. */
export const statusCommand: Command = {
  name: "status",
  summary: "Show the login, token expiry, upstream and client version",
  help: HELP,
  options: {},
  run,
};
