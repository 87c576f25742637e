/**
 * `cursor-bridge` entry point: dispatches to sub-commands, prints help and version, maps unexpected failures to a
 * one-line message and exit code (never a stack trace).
 */
import { launcherFromEnv, setLauncher, withLauncher } from "../util/command-hint.js";
import { ProxyError } from "../util/errors.js";
import { redactText } from "../util/logger.js";
import { type Command, EXIT } from "./command.js";
import { loadCommand, loadCommands } from "./commands.js";
import { type CliIo, processIo } from "./io.js";
import { packageVersion } from "./version.js";
import { helpWidth, wrapText } from "./wrap.js";

function topLevelHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `cursor-bridge ${packageVersion()} — use your Cursor subscription from OpenAI-compatible clients

Usage: cursor-bridge <command> [options]

Commands:
${lines.join("\n")}

Options:
  -h, --help     Show help (also: cursor-bridge <command> --help)
  -v, --version  Print the version

Quick start:
  cursor-bridge login        # sign in to Cursor in your browser
  cursor-bridge serve        # OpenAI-compatible API on http://127.0.0.1:8765/v1
`;
}

/** Where the commands come from: a fixed list, or each command's module loaded when needed (commands.ts). */
interface CommandSource {
  find(name: string): Promise<Command | undefined>;
  all(): Promise<readonly Command[]>;
}

const LAZY_COMMANDS: CommandSource = { find: loadCommand, all: loadCommands };

/** How much of a command's stderr (its end) a failure under --json reports. */
const PROBLEM_TAIL_CHARS = 16_384;

/**
 * Runs the CLI with the given arguments; resolves to the exit code. Hints naming a command are written for how the
 * process was launched (`npm run --silent cli -- login` from a clone, `cursor-bridge login` when installed), on every line
 * this prints and in the server's error messages. Only the module of the command that runs is loaded, unless
 * `commands` gives the list.
 */
export async function main(argv: string[], rawIo: CliIo = processIo(), commands?: readonly Command[]): Promise<number> {
  const previous = setLauncher(launcherFromEnv(rawIo.env));
  const io: CliIo = {
    ...rawIo,
    out: (text) => rawIo.out(withLauncher(text)),
    err: (text) => rawIo.err(withLauncher(text)),
  };
  try {
    const source: CommandSource =
      commands === undefined
        ? LAZY_COMMANDS
        : { find: async (name) => commands.find((c) => c.name === name), all: async () => commands };
    return await dispatch(argv, io, source);
  } finally {
    setLauncher(previous);
  }
}

const EXIT_NAMES: Record<number, string> = {
  [EXIT.failure]: "failure",
  [EXIT.usage]: "usage",
  [EXIT.unauthenticated]: "unauthenticated",
  [EXIT.unavailable]: "unavailable",
};

function exitCodeFor(error: ProxyError): number {
  if (error.code === "invalid_request") return EXIT.usage;
  if (error.code === "unauthenticated") return EXIT.unauthenticated;
  if (error.code === "backend_unavailable" || error.code === "timeout") return EXIT.unavailable;
  return EXIT.failure;
}

async function dispatch(argv: string[], io: CliIo, commands: CommandSource): Promise<number> {
  const [first, ...rest] = argv;
  const help = (text: string) => io.out(wrapText(text, helpWidth(io.columns)));
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    const target = first === "help" && rest[0] !== undefined ? await commands.find(rest[0]) : undefined;
    help(target ? target.help : topLevelHelp(await commands.all()));
    return EXIT.ok;
  }
  if (first === "-v" || first === "--version") {
    io.out(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  // Under --json, stdout is always one JSON document: a failure that printed none gets {"error": {...}}.
  const json = rest.includes("--json");
  let printed = false;
  let problem = "";
  const jsonError = (code: string, message: string, exitCode: number) => {
    if (json && !printed) io.out(`${JSON.stringify({ error: { code, message, exitCode } }, null, 2)}\n`);
    return exitCode;
  };
  const command = await commands.find(first);
  if (!command) {
    // Echoed only when it looks like a command word: a misplaced argument may be a pasted secret (`--api-key=…`).
    const message = first.startsWith("-")
      ? "Options come after the command: `cursor-bridge <command> [options]`. Run `cursor-bridge --help` for the list of commands."
      : /^[a-z][a-z0-9-]{0,30}$/.test(first)
        ? `Unknown command "${first}". Run \`cursor-bridge --help\` for the list of commands.`
        : "Unknown command (not shown: it does not look like a command name). Run `cursor-bridge --help` for the list of commands.";
    io.err(`${message}\n`);
    return jsonError("usage", withLauncher(message), EXIT.usage);
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    help(command.help);
    return EXIT.ok;
  }
  const commandIo: CliIo = {
    ...io,
    out: (text) => {
      printed = true;
      io.out(text);
    },
    err: (text) => {
      // Only --json reports it, and only its end: a serve writes a line per request for as long as it runs, and
      // every line kept here stayed in the heap (and in every full GC's marking) until the process exited.
      if (json) {
        problem += text;
        if (problem.length > 2 * PROBLEM_TAIL_CHARS) problem = problem.slice(-PROBLEM_TAIL_CHARS);
      }
      io.err(text);
    },
  };
  try {
    const code = await command.run(rest, commandIo);
    if (code === EXIT.ok) return code;
    const message = withLauncher(redactText(problem.trim())) || `cursor-bridge ${command.name} failed.`;
    return jsonError(EXIT_NAMES[code] ?? "failure", message, code);
  } catch (error) {
    const proxyError = ProxyError.from(error);
    const message = redactText(proxyError.message);
    io.err(`cursor-bridge ${command.name}: ${message}\n`);
    return jsonError(proxyError.code, withLauncher(message), exitCodeFor(proxyError));
  }
}
