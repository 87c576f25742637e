/**
 * `cursor-bridge setup zed|jetbrains|neovim`: the editor's agent-server entry that starts `cursor-bridge acp`,
 * printed, or with `--write` merged into the editor's JSON file (Zed's settings.json, JetBrains' ~/.jetbrains/acp.json)
 * the way the other `setup --write` commands merge: other settings kept, a backup, the diff shown, a JSONC file left
 * alone. Neovim plugins are configured in Lua, so it is printed only. The command is this Node and the absolute path of
 * bin/cursor-bridge.js when known (editors started from a desktop do not see a shell's PATH), else `cursor-bridge`.
 */
import { realpathSync } from "node:fs";
import { basename, join } from "node:path";
import { ProxyError } from "../util/errors.js";
import { type OptionSpec, parseCommandLine } from "./args.js";
import { EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import type { CliIo } from "./io.js";
import { parseJsonObject, writeMergedFile } from "./setup-write.js";
import { MergeRefused } from "./toml-merge.js";

/** The display name of the agent in the editors. */
export const AGENT_NAME = "Cursor (cursor-bridge)";

/** The editors `setup` knows. */
export const EDITOR_NAMES = ["zed", "jetbrains", "neovim"] as const;
type EditorName = (typeof EDITOR_NAMES)[number];

/** How the editor starts the agent. */
export interface AgentLaunch {
  command: string;
  args: string[];
}

/** `node /abs/bin/cursor-bridge.js acp` when this process runs that file, else `cursor-bridge acp`. */
export function agentLaunch(argv1: string | undefined, execPath: string, model: string | undefined): AgentLaunch {
  const extra = model === undefined ? [] : ["--model", model];
  let script: string | undefined;
  try {
    script = argv1 === undefined ? undefined : realpathSync(argv1);
  } catch {
    script = undefined;
  }
  if (script !== undefined && basename(script) === "cursor-bridge.js") {
    return { command: execPath, args: [script, "acp", ...extra] };
  }
  return { command: "cursor-bridge", args: ["acp", ...extra] };
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const luaList = (items: string[]) => `{ ${items.map((item) => JSON.stringify(item)).join(", ")} }`;

function zedEntry(launch: AgentLaunch) {
  return { type: "custom", command: launch.command, args: launch.args, env: {} };
}

function jetbrainsEntry(launch: AgentLaunch) {
  return { command: launch.command, args: launch.args, env: {} };
}

function neovimText(launch: AgentLaunch): string {
  const all = [launch.command, ...launch.args];
  return `-- avante.nvim
require("avante").setup({
  provider = "cursor-bridge",
  acp_providers = {
    ["cursor-bridge"] = { command = ${JSON.stringify(launch.command)}, args = ${luaList(launch.args)}, env = {} },
  },
})

-- CodeCompanion.nvim (an ACP adapter of its own)
require("codecompanion").setup({
  adapters = {
    acp = {
      cursor_bridge = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "cursor_bridge",
          formatted_name = ${JSON.stringify(AGENT_NAME)},
          commands = { default = ${luaList(all)} },
          defaults = { auth_method = "cursor-login" },
        })
      end,
    },
  },
  strategies = { chat = { adapter = "cursor_bridge" } },
})
`;
}

interface EditorFile {
  path(env: Readonly<Record<string, string | undefined>>, homedir: string): string;
  merge(existing: string | undefined, launch: AgentLaunch, path: string): string;
}

function mergeAgentServers(entry: object) {
  return (existing: string | undefined, _launch: AgentLaunch, path: string) => {
    const config = parseJsonObject(existing ?? "", path);
    const servers = config.agent_servers;
    const merged =
      servers !== null && typeof servers === "object" && !Array.isArray(servers) ? { ...servers } : ({} as object);
    return json({ ...config, agent_servers: { ...merged, [AGENT_NAME]: entry } });
  };
}

function fileOf(editor: EditorName, launch: AgentLaunch): EditorFile | undefined {
  if (editor === "zed") {
    return {
      path: (env, home) => join(env.XDG_CONFIG_HOME || join(home, ".config"), "zed", "settings.json"),
      merge: mergeAgentServers(zedEntry(launch)),
    };
  }
  if (editor === "jetbrains") {
    return {
      path: (_env, home) => join(home, ".jetbrains", "acp.json"),
      merge: mergeAgentServers(jetbrainsEntry(launch)),
    };
  }
  return undefined;
}

/** What `setup <editor>` prints. */
export function editorText(editor: EditorName, launch: AgentLaunch): string {
  if (editor === "zed") return json({ agent_servers: { [AGENT_NAME]: zedEntry(launch) } });
  if (editor === "jetbrains") return json({ agent_servers: { [AGENT_NAME]: jetbrainsEntry(launch) } });
  return neovimText(launch);
}

/** True when `argv` names an editor (then {@link runEditorSetup} handles the command). */
export function namesEditor(argv: readonly string[]): boolean {
  return argv.some((arg) => (EDITOR_NAMES as readonly string[]).includes(arg));
}

/** The options of `cursor-bridge setup`, for a client and an editor alike. */
export const SETUP_OPTIONS: OptionSpec = {
  write: { type: "boolean" },
  file: { type: "string" },
  model: { type: "string" },
};

/** `cursor-bridge setup zed|jetbrains|neovim [--write] [--file <path>] [--model <id>]`. */
export async function runEditorSetup(argv: string[], io: CliIo): Promise<number> {
  const editor = argv.find((arg) => (EDITOR_NAMES as readonly string[]).includes(arg)) as EditorName;
  const rest = argv.filter((arg) => arg !== editor);
  const { flags, values } = parseCommandLine("setup", rest, SETUP_OPTIONS);
  const ctx = await createCliContext(io, flags);
  const model = typeof values.model === "string" ? values.model : undefined;
  if (model !== undefined && !/^[\w.:/@[\]-]{1,256}$/.test(model)) {
    throw new ProxyError("invalid_request", "--model takes a model id such as default or claude-4.5-sonnet.");
  }
  if (values.file !== undefined && values.write !== true) {
    throw new ProxyError("invalid_request", "--file names the file --write writes to: add --write.");
  }
  const launch = agentLaunch(process.argv[1], process.execPath, model);
  const text = editorText(editor, launch);
  const file = fileOf(editor, launch);
  if (values.write !== true) {
    if (ctx.json) ctx.printJson({ editor, command: launch.command, args: launch.args, config: text });
    else io.out(text);
    return EXIT.ok;
  }
  if (file === undefined) {
    throw new ProxyError(
      "invalid_request",
      `${editor} plugins are configured in Lua: run \`cursor-bridge setup ${editor}\` and add what it prints to your config.`,
    );
  }
  const path = typeof values.file === "string" ? values.file : file.path(io.env, ctx.paths.homedir);
  try {
    const result = await writeMergedFile(path, (existing) => file.merge(existing, launch, path), ctx.now());
    if (ctx.json) ctx.printJson({ editor, ...result });
    else if (!result.changed) io.out(`${path} already has this configuration; nothing changed.\n`);
    else {
      io.out(result.diff);
      io.out(
        result.created ? `Created ${path}.\n` : `Updated ${path} (the previous version is in ${result.backup}).\n`,
      );
      io.out(`Restart ${editor === "zed" ? "Zed" : "the IDE"} and pick "${AGENT_NAME}" in its agent panel.\n`);
    }
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof MergeRefused)) throw error;
    io.err(`cursor-bridge setup: ${path}: ${error.message}\n`);
    io.out(text);
    return EXIT.failure;
  }
}

/** The help text's section on editors. */
export const EDITORS_HELP = `Editors, which start \`cursor-bridge acp\` (the Agent Client Protocol agent):
  zed        --write merges agent_servers into $XDG_CONFIG_HOME/zed/settings.json
  jetbrains  --write merges agent_servers into ~/.jetbrains/acp.json
  neovim     avante.nvim and CodeCompanion snippets in Lua (printed only)
  (--model <id> there sets the model new sessions start on.)
`;
