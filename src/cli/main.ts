/**
 * `cursor-bridge` entry point: dispatches to sub-commands, prints help and version, maps unexpected failures to a
 * one-line message and exit code (never a stack trace).
 */
import { ProxyError } from "../util/errors.js";
import { redactText } from "../util/logger.js";
import { type Command, EXIT } from "./command.js";
import { COMMANDS } from "./commands.js";
import { type CliIo, processIo } from "./io.js";
import { packageVersion } from "./version.js";

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

/** Runs the CLI with the given arguments; resolves to the exit code. */
export async function main(
  argv: string[],
  io: CliIo = processIo(),
  commands: readonly Command[] = COMMANDS,
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    const target = first === "help" ? commands.find((c) => c.name === rest[0]) : undefined;
    io.out(target ? target.help : topLevelHelp(commands));
    return EXIT.ok;
  }
  if (first === "-v" || first === "--version") {
    io.out(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const command = commands.find((c) => c.name === first);
  if (!command) {
    io.err(`Unknown command "${first}". Run \`cursor-bridge --help\` for the list of commands.\n`);
    return EXIT.usage;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.out(command.help);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    const proxyError = ProxyError.from(error);
    io.err(`cursor-bridge ${command.name}: ${redactText(proxyError.message)}\n`);
    if (proxyError.code === "invalid_request") return EXIT.usage;
    if (proxyError.code === "unauthenticated") return EXIT.unauthenticated;
    if (proxyError.code === "backend_unavailable" || proxyError.code === "timeout") return EXIT.unavailable;
    return EXIT.failure;
  }
}
