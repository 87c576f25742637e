/**
 * `cursor-bridge models`: the models the logged-in account may use (`GetUsableModels`, docs/protocol.md §6), with
 * the context window from the bridge's family table because Cursor does not report it. Before a login it lists what
 * `serve` would serve, the embedded emulator's models, and says so.
 */
import { toModelList } from "../backend/models.js";
import { contextWindowFor } from "../surfaces/kit/model-list.js";
import { createLogger } from "../util/logger.js";
import { COMMON_OPTIONS_HELP, parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import { tokenCount } from "./format.js";
import { type CliIo, formatTable } from "./io.js";
import { namingCursorUrl, openServedApi } from "./upstream.js";

const HELP = `Usage: cursor-bridge models [options]

List the Cursor models your account can use: id (what to put in "model"), display name, whether it reasons,
context window and aliases. "auto" lets Cursor pick. Before you log in, it lists the built-in emulator's models
(what \`cursor-bridge serve\` serves until then), labelled as such.

${COMMON_OPTIONS_HELP}

Examples:
  cursor-bridge models
  cursor-bridge models --json | jq -r '.models[].id'
`;

/** One row of the listing; the JSON output is an array of these. */
export interface ModelRow {
  id: string;
  displayName: string;
  reasoning: boolean;
  contextWindow: number;
  aliases: string[];
  maxMode: boolean;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags } = parseCommandLine("models", argv);
  const ctx = await createCliContext(io, flags);
  const logger = createLogger({ level: "warn", sink: (line) => io.err(`${line}\n`) });
  const served = await openServedApi(ctx, logger);
  let rows: ModelRow[];
  try {
    rows = toModelList(await served.api.getUsableModels()).map((model) => ({
      id: model.id,
      displayName: model.displayName,
      reasoning: model.reasoning,
      contextWindow: contextWindowFor(model.id),
      aliases: model.aliases,
      maxMode: model.maxMode,
    }));
  } catch (error) {
    throw namingCursorUrl(error, served, ctx.config.cursorApiUrl);
  } finally {
    await served.close();
  }
  if (ctx.json) {
    ctx.printJson({ upstream: served.kind, models: rows });
    return EXIT.ok;
  }
  if (served.kind === "emulator") {
    io.out(
      `${ctx.style.yellow("Not logged in:")} the built-in Cursor emulator's models, what \`cursor-bridge serve\` serves ` +
        "until you run `cursor-bridge login`.\n",
    );
  }
  io.out(
    formatTable(
      ["ID", "NAME", "REASONING", "CONTEXT", "ALIASES"],
      rows.map((row) => [
        row.id,
        row.displayName,
        row.reasoning ? "yes" : "no",
        tokenCount(row.contextWindow),
        row.aliases.join(", "),
      ]),
    ),
  );
  io.out(ctx.style.dim(`${rows.length} models. Use the ID (or an alias) as "model" in requests.\n`));
  return EXIT.ok;
}

/** `cursor-bridge models`. */
export const modelsCommand: Command = {
  name: "models",
  summary: "List the Cursor models your account can use",
  help: HELP,
  options: {},
  run,
};
