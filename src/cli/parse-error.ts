/**
 * The message of a command line that node:util parseArgs refused. Its own module, free of the configuration, so
 * commands that parse their options alone (`emulator`) share it without loading the settings table.
 */
import type { ParseArgsConfig } from "node:util";
import { redactText } from "../util/logger.js";

type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/**
 * What was wrong with a command line parseArgs refused, in words: the unknown option named, a negative number given
 * to an option that takes a value said to be one (parseArgs calls it "ambiguous" and suggests `--opt=-XYZ`),
 * a stray argument not repeated (people paste API keys as arguments).
 */
export function parseErrorMessage(
  command: string,
  error: unknown,
  argv: readonly string[] = [],
  options: OptionSpec = {},
): string {
  const code = (error as { code?: unknown }).code;
  const hint = `Run \`cursor-bridge ${command} --help\` for its options.`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    for (let i = 0; i < argv.length - 1; i++) {
      const flag = argv[i] ?? "";
      const next = argv[i + 1] ?? "";
      if (!flag.startsWith("--") || options[flag.slice(2)]?.type !== "string" || !/^-\d/.test(next)) continue;
      return `${flag} ${redactText(next)}: the value cannot be negative. ${hint}`;
    }
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    // The value is not repeated: people paste API keys as arguments.
    return `\`${command}\` takes no arguments besides options (the extra argument is not shown). ${hint}`;
  }
  const message = error instanceof Error ? error.message.split(". ")[0] : "Invalid options";
  return `${redactText(message ?? "Invalid options")}. ${hint}`;
}
