/**
 * `cursor-bridge setup <client>`: prints the configuration a client needs to use the server that `serve` would run
 * with the same flags, environment and config file (host, port, whether a local API key is required), with a model
 * the server lists (asked from the running server when it answers). `--write` merges it into the client's config
 * file, keeping a backup and showing the diff.
 */

import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { ProxyError } from "../util/errors.js";
import { effortTiersOf, siblingTiers } from "../util/model-efforts.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import type { CliIo } from "./io.js";
import { DEFAULT_PORT, findRunningServer, portGiven } from "./runtime-file.js";
import {
  KEY_ENV,
  PLACEHOLDER_KEY,
  SETUP_CLIENTS,
  type SetupClient,
  type SetupModel,
  type SetupTarget,
} from "./setup-clients.js";
import { EDITOR_NAMES, EDITORS_HELP, namesEditor, runEditorSetup, SETUP_OPTIONS } from "./setup-editors.js";
import { writeMergedFile } from "./setup-write.js";
import { MergeRefused } from "./toml-merge.js";
import { packageRoot } from "./version.js";

const names = SETUP_CLIENTS.map((client) => client.name);
/** Every name `setup` takes: the clients and the editors that start `acp`. */
const allNames = [...names, ...EDITOR_NAMES];
const width = Math.max(...names.map((name) => name.length));

const HELP = `Usage: cursor-bridge setup <client> [options]

Print the configuration <client> needs to use cursor-bridge: the server's address (from --host/--port, the
environment and the config file, as \`serve\` reads them), the key to send, and a model the server lists (asked from
the running server when it answers, else "auto"). Clients:
${SETUP_CLIENTS.map((client) => `  ${client.name.padEnd(width)}  ${client.summary}`).join("\n")}

${EDITORS_HELP}
Without a local API key any key works ("${PLACEHOLDER_KEY}"); with one (--api-key / CURSOR_BRIDGE_API_KEY), the
configuration reads it from CURSOR_BRIDGE_API_KEY and never contains it.

Options:
  --write          Merge it into the client's config file (opencode, opencode-plugin: opencode.json at
                   $OPENCODE_CONFIG, else $XDG_CONFIG_HOME/opencode/opencode.json; codex: $CODEX_HOME/config.toml,
                   else ~/.codex/config.toml). Other settings in the file are kept; the old file is copied to
                   <file>.cursor-bridge-<time>.bak and the diff is printed. A JSONC file (with comments) is left alone.
  --file <path>    Write to this file instead (with --write)
  --model <id>     The model to select (default: auto); checked against the running server's list
  --host, --port   The server's address (default: the running server's, as its runtime file in the data
                   directory records it; else as \`serve\` would listen)
${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge setup claude-code >> ~/.bashrc
  cursor-bridge setup opencode --write
  cursor-bridge setup codex --write --model claude-4.5-sonnet
  eval "$(cursor-bridge setup openai)"
`;

const MODELS_TIMEOUT_MS = 2_000;

/** The server's origin as a client reaches it: a wildcard bind address means this machine's loopback. */
export function clientOrigin(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, "");
  const name = ["0.0.0.0", "::", ""].includes(bare) ? "127.0.0.1" : bare;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}

interface ServedModels {
  models: SetupModel[];
  /** True when the running server listed them (so --model can be checked). */
  fromServer: boolean;
  /** Where the list came from, in words. */
  source: string;
  /** The running server refused the request for want of its API key. */
  needsKey: boolean;
  /** False when nothing answered at the address. */
  answered: boolean;
}

/** The running server's models (`GET /v1/models`), `401` when it wants a key, undefined when it does not answer. */
async function fetchModels(origin: string, apiKey: string | undefined): Promise<SetupModel[] | 401 | undefined> {
  try {
    const response = await fetch(`${origin}/v1/models`, {
      headers: apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(MODELS_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return response.status === 401 ? 401 : undefined;
    }
    const body = (await response.json()) as { data?: unknown };
    if (!Array.isArray(body.data)) return undefined;
    return withSiblingTiers(
      body.data.flatMap(
        (entry: {
          id?: unknown;
          display_name?: unknown;
          reasoning?: unknown;
          vision?: unknown;
          aliases?: unknown;
          cursor_bridge?: unknown;
        }) =>
          typeof entry.id === "string"
            ? [
                {
                  ...effortsOf(entry.cursor_bridge),
                  id: entry.id,
                  name: typeof entry.display_name === "string" ? entry.display_name : entry.id,
                  reasoning: entry.reasoning === true,
                  vision: entry.vision === true,
                  aliases: Array.isArray(entry.aliases)
                    ? entry.aliases.filter((alias): alias is string => typeof alias === "string")
                    : [],
                  ...(isVariant(entry.cursor_bridge) ? { variant: true } : {}),
                },
              ]
            : [],
      ),
    );
  } catch {
    return undefined;
  }
}

/** A variant id's `cursor_bridge` object (`{base, params}`): the id fixes its tier. */
function isVariant(extension: unknown): boolean {
  return typeof extension === "object" && extension !== null && "params" in extension;
}

/**
 * A flat id's tiers: those it has a listed sibling id for (`gpt-5.3-codex` → `gpt-5.3-codex-high`), which
 * `reasoning_effort` runs it as; a base keeps its own, a variant id has none.
 */
function withSiblingTiers(models: Array<SetupModel & { variant?: boolean }>): SetupModel[] {
  const listed = new Set(models.map((model) => model.id.toLowerCase()));
  return models.map(({ variant, ...model }) => {
    if (model.efforts !== undefined || variant === true) return model;
    const efforts = siblingTiers(model.id, listed);
    return efforts.length === 0 ? model : { ...model, efforts };
  });
}

/** The effort tiers of a base model's `cursor_bridge` object (absent when it has none). */
function effortsOf(extension: unknown): { efforts?: string[] } {
  const efforts = effortTiersOf(extension);
  return efforts.length === 0 ? {} : { efforts };
}

const AUTO: SetupModel = { id: "auto", name: "Auto", reasoning: false, vision: true, aliases: [] };

async function servedModels(origin: string, apiKey: string | undefined): Promise<ServedModels> {
  const models = await fetchModels(origin, apiKey);
  if (Array.isArray(models) && models.length > 0) {
    return { models, fromServer: true, needsKey: false, answered: true, source: `listed by the server at ${origin}` };
  }
  // "auto" (Cursor's Auto) exists on every upstream, the emulator included.
  const fallback = 'only "auto" (every upstream serves it)';
  if (models === 401) {
    const source = `the server at ${origin} requires its API key (set ${KEY_ENV} to list its models), so ${fallback}`;
    return { models: [AUTO], fromServer: false, needsKey: true, answered: true, source };
  }
  const source = `no server answered at ${origin}, so ${fallback}; start it and run this again to list every model`;
  return { models: [AUTO], fromServer: false, needsKey: false, answered: models !== undefined, source };
}

function chooseModel(requested: string | undefined, served: ServedModels): string {
  const ids = served.models.map((model) => model.id);
  if (requested === undefined) return ids.includes("auto") ? "auto" : (ids[0] ?? "auto");
  if (!/^[\w.:/@[\]-]{1,256}$/.test(requested)) {
    throw new ProxyError("invalid_request", "--model takes a model id such as auto or claude-4.5-sonnet.");
  }
  if (served.fromServer && !ids.includes(requested)) {
    const some = ids.slice(0, 12).join(", ");
    throw new ProxyError(
      "invalid_request",
      `The server does not list the model \`${requested}\`. It lists: ${some}${ids.length > 12 ? ", …" : ""}.`,
    );
  }
  return requested;
}

function splitClient(argv: string[]): { client: SetupClient; rest: string[] } {
  const index = argv.findIndex((arg) => names.includes(arg));
  if (index < 0) {
    const first = argv[0];
    // A typo is named; anything else is not echoed (a misplaced argument is often a pasted key).
    const which =
      first === undefined || first.startsWith("-")
        ? "Name a client"
        : /^[a-z][a-z-]{0,24}$/.test(first)
          ? `Unknown client \`${first}\``
          : "Unknown client (the argument is not shown)";
    throw new ProxyError("invalid_request", `${which}: one of ${allNames.join(", ")}.`);
  }
  return {
    client: SETUP_CLIENTS[names.indexOf(argv[index] ?? "")] as SetupClient,
    rest: argv.filter((_, i) => i !== index),
  };
}

async function run(argv: string[], io: CliIo): Promise<number> {
  if (namesEditor(argv)) return runEditorSetup(argv, io);
  const { client, rest } = splitClient(argv);
  const { flags, values } = parseCommandLine("setup", rest, SETUP_OPTIONS);
  const ctx = await createCliContext(io, flags);
  // Without a port, the server `serve` recorded as running (its runtime file) wins over the configured default.
  const running = portGiven(flags.config, io.env, ctx.config.port)
    ? undefined
    : await findRunningServer(ctx.config.dataDir);
  const host = running?.host ?? ctx.config.host;
  const port = running?.port ?? ctx.config.port;
  if (port === 0) {
    throw new ProxyError("invalid_request", "The server's port is chosen when it starts (port 0): pass --port.");
  }
  if (values.file !== undefined && values.write !== true) {
    throw new ProxyError("invalid_request", "--file names the file --write writes to: add --write.");
  }
  if (values.write === true && client.file === undefined) {
    throw new ProxyError(
      "invalid_request",
      `${client.name} is configured with environment variables or a command line, not a file: run \`cursor-bridge setup ${client.name}\` and use what it prints.`,
    );
  }
  const origin = clientOrigin(host, port);
  const served = await servedModels(origin, ctx.config.apiKey);
  const model = chooseModel(typeof values.model === "string" ? values.model : undefined, served);
  const target: SetupTarget = {
    origin,
    keyRequired: ctx.config.apiKey !== undefined || served.needsKey,
    model,
    pluginEntry: pathToFileURL(packageRoot()).href,
    models: served.models.some((entry) => entry.id === model)
      ? served.models
      : [...served.models, { id: model, name: model, reasoning: false, vision: false, aliases: [] }],
  };
  const text = client.render(target);

  if (!ctx.json) {
    if (running !== undefined) io.err(`Server: the cursor-bridge running at ${origin} (pid ${running.pid}).\n`);
    io.err(`Models: ${served.source}.\n`);
    // The plugin starts a bridge of its own: a server missing at the address is nothing to warn about.
    if (served.answered === false && client.ownBridge !== true) {
      const serve = port === DEFAULT_PORT ? "`cursor-bridge serve`" : `\`cursor-bridge serve --port ${port}\``;
      io.err(
        `Warning: nothing serves ${origin} right now: start it with ${serve} before using this configuration (or pass --port with the running server's port).\n`,
      );
    }
  }
  if (values.write !== true || client.file === undefined) {
    if (ctx.json) ctx.printJson({ client: client.name, origin, model, modelsFrom: served.source, config: text });
    else io.out(text);
    return EXIT.ok;
  }
  const file = client.file;
  const path = typeof values.file === "string" ? values.file : file.path({ env: io.env, homedir: ctx.paths.homedir });
  let result: Awaited<ReturnType<typeof writeMergedFile>>;
  try {
    result = await writeMergedFile(path, (existing) => file.merge(existing, target, path), ctx.now());
  } catch (error) {
    if (!(error instanceof MergeRefused)) throw error;
    io.err(`cursor-bridge setup: ${path}: ${error.message}\n`);
    if (ctx.json) ctx.printJson({ error: { code: "merge_refused", message: error.message, path }, config: text });
    else io.out(text);
    return EXIT.failure;
  }
  if (ctx.json) {
    ctx.printJson({ client: client.name, origin, model, modelsFrom: served.source, ...result });
    return EXIT.ok;
  }
  if (!result.changed) {
    io.out(`${path} already has this configuration; nothing changed.\n`);
  } else {
    io.out(result.diff);
    io.out(
      result.created
        ? `Created ${path}.\n`
        : `Updated ${path} (the previous version is in ${result.backup ?? "the backup"}).\n`,
    );
  }
  io.out(file.next(target, await readFile(path, "utf8")));
  return EXIT.ok;
}

/** `cursor-bridge setup`. */
export const setupCommand: Command = {
  name: "setup",
  summary: `Print (or --write) a client's configuration: ${allNames.join(", ")}`,
  help: HELP,
  options: SETUP_OPTIONS,
  run,
};
