/**
 * `cursor-bridge login`: the PKCE browser login (docs/protocol.md §3.1) or, with `--api-key`, an API-key exchange
 * (§3.5). Prints the approval URL (and opens a browser when one is available), shows a spinner on a terminal or
 * plain progress lines otherwise, and stores the tokens in the credential file.
 */
import { type CredentialStatus, loginWithApiKey, loginWithBrowser, type PollProgress } from "../auth/index.js";
import { ProxyError } from "../util/errors.js";
import { ACCOUNT_OPTION, ACCOUNT_OPTION_HELP, audit, selectAccount } from "./account-flag.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { openInBrowser } from "./browser.js";
import { type Command, EXIT } from "./command.js";
import {
  announceInvalidCredentialFile,
  type CliContext,
  type CliContextOverrides,
  createCliContext,
} from "./context.js";
import { expiryText, identityOf, sourceLabel } from "./format.js";
import { type CliIo, formatFields } from "./io.js";

const OPTIONS = {
  ...ACCOUNT_OPTION,
  "api-key": { type: "boolean" },
  "no-browser": { type: "boolean" },
  timeout: { type: "string" },
} as const;

const HELP = `Usage: cursor-bridge login [options]

Log in to Cursor. By default this prints a cursor.com link (and opens it in your browser when one is available),
then waits until you approve the login there. The session is stored in <configDir>/credentials.json (mode 0600);
with --account NAME it is kept beside the others in <configDir>/accounts/NAME.json, so a team's gateway can serve
several people's (or seats') Cursor subscriptions, each virtual key on its own account.

Options:
${ACCOUNT_OPTION_HELP}
  --api-key [KEY]      Log in with a Cursor user API key instead of the browser: the KEY given (it then lands
                       in your shell's history), else CURSOR_API_KEY, else prompted for (input hidden) on a
                       terminal, else read from stdin
  --no-browser         Only print the login URL (e.g. over SSH)
  --timeout <seconds>  Give up waiting for the browser approval after this long
                       (default: Cursor's own schedule, 150 checks, about 24 minutes)

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge login
  cursor-bridge login --no-browser
  cursor-bridge login --api-key                       # prompts for the key
  cursor-bridge login --api-key KEY                   # the key on the command line (kept in shell history)
  printf %s "$KEY" | cursor-bridge login --api-key    # key on stdin
  CURSOR_API_KEY=... cursor-bridge login --api-key --json
  cursor-bridge login --account alice --no-browser    # a named account beside the default one
`;

const SPINNER = ["|", "/", "-", "\\"];

function parseTimeoutMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new ProxyError("invalid_request", "--timeout expects a positive number of seconds.", { param: "timeout" });
  }
  return seconds * 1000;
}

/** Progress while polling: a spinner on a terminal, one plain line per check otherwise. */
function createProgress(ctx: CliContext): { onProgress: (p: PollProgress) => void; stop: () => void } {
  const startedAt = ctx.now();
  const elapsed = () => `${Math.round((ctx.now() - startedAt) / 1000)}s`;
  if (!ctx.io.isTty || ctx.json) {
    return {
      onProgress: (p) => ctx.io.err(`Waiting for approval in the browser (check ${p.attempt + 1}, ${elapsed()})…\n`),
      stop: () => undefined,
    };
  }
  let frame = 0;
  const draw = () =>
    ctx.io.err(`\r${SPINNER[frame++ % SPINNER.length]} Waiting for approval in the browser… ${elapsed()}`);
  const timer = setInterval(draw, 120);
  draw();
  return {
    onProgress: () => undefined,
    stop: () => {
      clearInterval(timer);
      ctx.io.err("\r\u001b[K");
    },
  };
}

async function browserLogin(
  ctx: CliContext,
  values: Readonly<Record<string, string | boolean | undefined>>,
  overwriteInvalid: boolean,
): Promise<CredentialStatus> {
  const timeoutMs = parseTimeoutMs(typeof values.timeout === "string" ? values.timeout : undefined);
  const timeoutSignal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const useBrowser = values["no-browser"] !== true && ctx.io.isTty;
  let progress: ReturnType<typeof createProgress> | undefined;
  try {
    return await loginWithBrowser({
      store: ctx.store,
      overwriteInvalid,
      apiUrl: ctx.config.cursorApiUrl,
      websiteUrl: ctx.config.cursorWebsiteUrl,
      now: ctx.now,
      ...(timeoutSignal === undefined ? {} : { signal: timeoutSignal }),
      onLoginUrl: async (url) => {
        ctx.info(`Open this link to log in to Cursor:\n\n  ${url}\n\n`);
        if (useBrowser) {
          const opened = await openInBrowser(url, { platform: ctx.paths.platform, env: ctx.io.env });
          ctx.info(opened ? "Opened it in your browser.\n" : "Could not open a browser; open the link yourself.\n");
        }
        progress = createProgress(ctx);
      },
      onProgress: (p) => progress?.onProgress(p),
    });
  } catch (error) {
    if (timeoutSignal?.aborted === true) {
      throw new ProxyError(
        "timeout",
        `The login was not approved within ${(timeoutMs ?? 0) / 1000} s. Run \`cursor-bridge login\` again.`,
        { cause: error, retryable: false },
      );
    }
    throw error;
  } finally {
    progress?.stop();
  }
}

/**
 * `--api-key KEY` and `--api-key=KEY`: the key is taken out of `argv` before the options are parsed (`--api-key`
 * alone stays a switch), so that the parser, which never echoes a stray argument, does not see it.
 */
export function takeApiKeyArgument(argv: readonly string[]): { argv: string[]; key: string | undefined } {
  const rest: string[] = [];
  let key: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg.startsWith("--api-key=")) {
      key = arg.slice("--api-key=".length);
      rest.push("--api-key");
    } else if (arg === "--api-key" && i + 1 < argv.length && !(argv[i + 1] ?? "-").startsWith("-")) {
      key = argv[i + 1];
      rest.push(arg);
      i++;
    } else rest.push(arg);
  }
  return { argv: rest, key };
}

async function readApiKey(ctx: CliContext, given: string | undefined): Promise<string> {
  let key: string | undefined;
  if (given !== undefined) {
    ctx.io.err(
      "Note: a key typed on the command line stays in your shell's history; `login --api-key` alone asks for it " +
        "(input hidden) or reads it from stdin.\n",
    );
    key = given;
  } else if (ctx.config.cursorApiKey !== undefined) {
    ctx.info("Using the API key from CURSOR_API_KEY.\n");
    key = ctx.config.cursorApiKey;
  } else if (ctx.io.input?.isTty === true) {
    key = await ctx.io.input.readSecret("Cursor API key (input hidden): ");
  } else if (ctx.io.input !== undefined) {
    key = await ctx.io.input.readAll();
  }
  key = key?.trim();
  if (key === undefined || key === "") {
    throw new ProxyError(
      "invalid_request",
      "No API key given. Type it at the prompt, pipe it on stdin, or set CURSOR_API_KEY.",
      { param: "api-key" },
    );
  }
  return key;
}

async function apiKeyLogin(
  ctx: CliContext,
  overwriteInvalid: boolean,
  given: string | undefined,
): Promise<CredentialStatus> {
  const key = await readApiKey(ctx, given);
  try {
    return await loginWithApiKey(key, {
      store: ctx.store,
      apiUrl: ctx.config.cursorApiUrl,
      overwriteInvalid,
      now: ctx.now,
    });
  } catch (error) {
    const proxyError = ProxyError.from(error);
    if (proxyError.code !== "unauthenticated") throw error;
    throw new ProxyError(
      "unauthenticated",
      "Cursor rejected the API key. Check it at cursor.com/settings and try again.",
      {
        cause: error,
      },
    );
  }
}

function printLoggedIn(ctx: CliContext, status: CredentialStatus): void {
  if (ctx.json) {
    ctx.printJson({ loggedIn: true, account: ctx.account, ...status });
    return;
  }
  ctx.io.out(`${ctx.style.green("Logged in as")} ${ctx.style.bold(identityOf(status))}\n`);
  ctx.io.out(
    formatFields([
      ["Account", ctx.account],
      ["Source", sourceLabel(status.source)],
      ["Token", expiryText(status, ctx.now())],
      ["Saved to", `${status.location} (mode 0600)`],
    ]),
  );
}

/** `login` with the context's overrides (the audit log). */
export async function runLogin(argv: string[], io: CliIo, overrides: CliContextOverrides = {}): Promise<number> {
  const taken = takeApiKeyArgument(argv);
  const { flags, values } = parseCommandLine("login", taken.argv, OPTIONS);
  const ctx = selectAccount(await createCliContext(io, flags, { ...overrides, useLoginUrl: false }), values);
  const overwriteInvalid = await announceInvalidCredentialFile(ctx, "Logging in will replace that file.");
  const status =
    values["api-key"] === true
      ? await apiKeyLogin(ctx, overwriteInvalid, taken.key)
      : await browserLogin(ctx, values, overwriteInvalid);
  await audit(ctx, "login", { source: status.source });
  printLoggedIn(ctx, status);
  return EXIT.ok;
}

/** `cursor-bridge login`. */
export const loginCommand: Command = {
  name: "login",
  summary: "Log in to Cursor (browser, or --api-key)",
  help: HELP,
  options: OPTIONS,
  run: (argv, io) => runLogin(argv, io),
};
