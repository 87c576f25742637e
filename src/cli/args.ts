/**
 * Flag parsing shared by the sub-commands (node:util parseArgs). Every command accepts `--json`, `--config <path>` and
 * every setting flag of the config table (`--config-dir`, `--cursor-api-url`, …); its own options come on top and win
 * when a name collides (e.g. `login --api-key` is a switch, not the bridge's client key). Parse errors never echo a
 * stray argument, because a misplaced argument is often a pasted secret.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { type ConfigFlags, type FlagValue, SETTINGS, settingForFlag } from "../config/index.js";
import { ProxyError } from "../util/errors.js";
import { parseErrorMessage } from "./parse-error.js";

/** parseArgs option declarations. */
export type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** The flags every command shares. */
export interface CliFlags {
  /** Print one JSON document on stdout instead of human text. */
  json: boolean;
  /** Settings by name (and `config`) for loadConfig. */
  config: ConfigFlags;
}

/** A parsed command line. */
export interface ParsedCommandLine {
  flags: CliFlags;
  /** The command's own options (not the shared ones). */
  values: Readonly<Record<string, string | boolean | undefined>>;
}

function commonOptions(): OptionSpec {
  const options: OptionSpec = { json: { type: "boolean" }, config: { type: "string" } };
  for (const setting of SETTINGS) {
    if (setting.flag === undefined) continue;
    options[setting.flag.slice(2)] = { type: "string", ...(setting.kind === "list" ? { multiple: true } : {}) };
  }
  return options;
}

/**
 * Parses `argv` of `command` with its own `options`.
 * @throws ProxyError `invalid_request` (exit code 2) for unknown or malformed options.
 */
export function parseCommandLine(command: string, argv: string[], options: OptionSpec = {}): ParsedCommandLine {
  const all: OptionSpec = { ...commonOptions(), ...options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options: all, allowPositionals: false, strict: true });
  } catch (error) {
    throw new ProxyError("invalid_request", parseErrorMessage(command, error, argv, all), { cause: error });
  }
  const config: Record<string, FlagValue> = {};
  const values: Record<string, string | boolean | undefined> = {};
  for (const [name, value] of Object.entries(parsed.values)) {
    if (name in options) {
      if (typeof value === "string" || typeof value === "boolean") values[name] = value;
      continue;
    }
    if (name === "json") continue;
    const setting = settingForFlag(`--${name}`);
    if (setting === undefined) continue;
    if (Array.isArray(value)) config[setting] = value.map(String);
    else if (typeof value === "string") config[setting] = value;
  }
  return { flags: { json: parsed.values.json === true, config }, values };
}

/** The help section describing the shared options. */
export const COMMON_OPTIONS_HELP = `Common options:
  --json                      Print one JSON document on stdout (progress goes to stderr)
  --config <path>             JSON config file (default: <configDir>/config.json)
  --config-dir <dir>          Where credentials.json lives (env CURSOR_BRIDGE_CONFIG_DIR)
  --cursor-api-url <url>      Cursor API base URL, also serving /auth (env CURSOR_API_URL)
  --client-version <version>  x-cursor-client-version to send (env CURSOR_CLIENT_VERSION)
  -h, --help                  Show this help
  Every setting flag listed by \`cursor-bridge serve --help\` is accepted as well.`;
