/**
 * What `cursor-bridge setup <client>` prints (and, for clients with a config file, merges into it): one definition
 * per client, pure functions of the server's address, the key to send and the models. The key is never written out:
 * without a local API key any value works (`local`); with one, every snippet reads it from CURSOR_BRIDGE_API_KEY, the
 * variable the server itself reads it from.
 */

import { join } from "node:path";
import { effortVariants } from "../util/model-efforts.js";
import { parseJsonObject } from "./setup-write.js";
import { mergeToml, rootStringValue, tomlString } from "./toml-merge.js";

/** Provider and plugin id cursor-bridge uses in client configs. */
export const PROVIDER_ID = "cursor-bridge";
/** The environment variable holding the local API key (the server reads the same one). */
export const KEY_ENV = "CURSOR_BRIDGE_API_KEY";
/** The placeholder key when the server requires none. */
export const PLACEHOLDER_KEY = "local";

/** A model the server serves. */
export interface SetupModel {
  id: string;
  name: string;
  reasoning: boolean;
  vision: boolean;
  /** Other ids that select the same model (the server lists them as entries of their own too). */
  aliases: readonly string[];
  /**
   * The effort tiers a parameterised base model offers, as OpenAI's `reasoning_effort` names them (its
   * `cursor_bridge.parameters` on `/v1/models`); absent for other models.
   */
  efforts?: readonly string[];
}

/** Everything a snippet depends on. */
export interface SetupTarget {
  /** `http://127.0.0.1:8765` (no path). */
  origin: string;
  /** True when the server requires a local API key (read from {@link KEY_ENV} by the snippets). */
  keyRequired: boolean;
  /** The model to select. */
  model: string;
  /** Models to declare (OpenCode's catalog). */
  models: readonly SetupModel[];
  /** The OpenCode plugin entry of this installation: the `file://` URL of its package root. */
  pluginEntry: string;
}

/** Where config files live: the environment and home directory of the user running `setup`. */
export interface SetupPaths {
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
}

/** One client. */
export interface SetupClient {
  name: string;
  summary: string;
  /** The text to print. */
  render(target: SetupTarget): string;
  /** The client starts its own bridge (the OpenCode plugin's child): no running server is needed. */
  ownBridge?: true;
  /** Present for clients with a config file `--write` can merge into. */
  file?: {
    /** The default config file. */
    path(paths: SetupPaths): string;
    /** The merged file content; throws MergeRefused when it cannot merge. */
    merge(existing: string | undefined, target: SetupTarget, path: string): string;
    /** What to run after writing `content` (the file as it is now). */
    next(target: SetupTarget, content: string): string;
  };
}

const set = (env: SetupPaths["env"], name: string) => {
  const value = env[name];
  return value !== undefined && value !== "" ? value : undefined;
};

const keyShell = (target: SetupTarget) => (target.keyRequired ? `"$${KEY_ENV}"` : PLACEHOLDER_KEY);
const keyNote = (target: SetupTarget) =>
  target.keyRequired ? `# The server requires its API key: export ${KEY_ENV}=<the key> first.\n` : "";
/** Shell lines, the key note (when there is one) after the first. */
const shellLines = (target: SetupTarget, first: string, rest: string[]) =>
  `${first}\n${keyNote(target)}${rest.join("\n")}\n`;

/**
 * One entry per model: ids the server lists as aliases of one another (`auto` and Cursor's `default`, `sonnet-4.5`
 * and `claude-4.5-sonnet`) are one model. The entry kept is the selected model, else `auto`, else the id listed first.
 */
export function distinctModels(models: readonly SetupModel[], selected: string): SetupModel[] {
  const byId = new Map(models.map((model) => [model.id, model]));
  const seen = new Set<string>();
  const kept: SetupModel[] = [];
  for (const model of models) {
    if (seen.has(model.id)) continue;
    const group = [model.id];
    for (let i = 0; i < group.length; i++) {
      for (const alias of byId.get(group[i] ?? "")?.aliases ?? []) {
        if (!group.includes(alias) && byId.has(alias)) group.push(alias);
      }
    }
    for (const id of group) seen.add(id);
    const id = group.includes(selected) ? selected : group.includes("auto") ? "auto" : model.id;
    kept.push(byId.get(id) ?? model);
  }
  return kept;
}

/** Families Cursor serves fast, best first: OpenCode's `small_model` (titles, summaries) should not wait on a big model. */
const FAST_MODELS = [/^composer-\d+$/, /haiku/, /fast/, /flash/, /mini/, /^composer/];

/** The fast model to name as OpenCode's `small_model`, or undefined when the server lists none. */
export function fastModel(models: readonly SetupModel[]): string | undefined {
  for (const pattern of FAST_MODELS) {
    const matching = models.filter((model) => pattern.test(model.id));
    const pick = matching.find((model) => !model.reasoning) ?? matching[0];
    if (pick !== undefined) return pick.id;
  }
  return undefined;
}

function variantsOf(model: SetupModel): { variants?: Record<string, Record<string, unknown>> } {
  const variants = effortVariants(model.efforts, { disableOwn: model.reasoning });
  return Object.keys(variants).length === 0 ? {} : { variants };
}

function openCodeProvider(target: SetupTarget): Record<string, unknown> {
  const models: Record<string, Record<string, unknown>> = {};
  for (const model of distinctModels(target.models, target.model)) {
    models[model.id] = {
      name: model.name,
      tool_call: true,
      ...(model.reasoning ? { reasoning: true } : {}),
      ...(model.vision ? { attachment: true } : {}),
      // OpenCode's variants (`opencode run --variant high`, its variant picker): one per effort tier, each sent as
      // reasoning_effort, which the bridge maps onto the model's own effort parameter; OpenCode's own others
      // (low/medium/high on any reasoning model, where they change nothing) disabled.
      ...variantsOf(model),
    };
  }
  return {
    npm: "@ai-sdk/openai-compatible",
    name: "cursor-bridge",
    options: {
      baseURL: `${target.origin}/v1`,
      // OpenCode substitutes {env:NAME} when it loads the file, so the key never lands in it.
      apiKey: target.keyRequired ? `{env:${KEY_ENV}}` : PLACEHOLDER_KEY,
    },
    models,
  };
}

const OPENCODE_SCHEMA = "https://opencode.ai/config.json";

/** `small_model`: OpenCode names each session with it, so a fast model keeps that from costing a slow Cursor turn. */
function smallModel(target: SetupTarget): { small_model?: string } {
  const fast = fastModel(target.models);
  return fast === undefined ? {} : { small_model: `${PROVIDER_ID}/${fast}` };
}

/** The global opencode.json (`$OPENCODE_CONFIG` wins). */
export function openCodePath(paths: SetupPaths): string {
  const explicit = set(paths.env, "OPENCODE_CONFIG");
  if (explicit !== undefined) return explicit;
  const configHome = set(paths.env, "XDG_CONFIG_HOME") ?? join(paths.homedir, ".config");
  return join(configHome, "opencode", "opencode.json");
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

const opencode: SetupClient = {
  name: "opencode",
  summary: "OpenCode: a provider block in opencode.json",
  render: (target) =>
    `// opencode.json (global: ~/.config/opencode/opencode.json, or a project's opencode.json)\n${json({
      $schema: OPENCODE_SCHEMA,
      provider: { [PROVIDER_ID]: openCodeProvider(target) },
      model: `${PROVIDER_ID}/${target.model}`,
      ...smallModel(target),
    })}${keyNote(target).replace("#", "//")}`,
  file: {
    path: openCodePath,
    merge(existing, target, path) {
      const config = parseJsonObject(existing ?? "", path);
      const merged: Record<string, unknown> = { $schema: OPENCODE_SCHEMA, ...config };
      const providers = merged.provider;
      merged.provider = {
        ...(typeof providers === "object" && providers !== null && !Array.isArray(providers) ? providers : {}),
        [PROVIDER_ID]: openCodeProvider(target),
      };
      // The user's default model stays theirs unless it is unset or already one of ours.
      if (typeof merged.model !== "string" || merged.model.startsWith(`${PROVIDER_ID}/`)) {
        merged.model = `${PROVIDER_ID}/${target.model}`;
      }
      const small = smallModel(target).small_model;
      if (
        small !== undefined &&
        (typeof merged.small_model !== "string" || merged.small_model.startsWith(`${PROVIDER_ID}/`))
      ) {
        merged.small_model = small;
      }
      return json(merged);
    },
    next: (target) => `${keyNote(target)}Run \`opencode\` (or \`opencode -m ${PROVIDER_ID}/${target.model}\`).\n`,
  },
};

/**
 * Plugin entries that name cursor-bridge: the bare package name (never published), this installation, or a `file:`
 * path of a folder named cursor-bridge (another or a removed installation: two would register the provider twice).
 */
export function isOurPluginEntry(entry: unknown, ours: string): boolean {
  if (typeof entry !== "string") return false;
  return entry === PROVIDER_ID || entry === ours || entry === `${ours}/` || /^file:.*\/cursor-bridge\/?$/.test(entry);
}

const pluginNext = (target: SetupTarget) =>
  `The entry is this installation (${target.pluginEntry}): if you move or remove it, run this again.\n` +
  "Then run `opencode auth login` (choose cursor) and `opencode models cursor`.\n";

const opencodePlugin: SetupClient = {
  name: "opencode-plugin",
  summary: "OpenCode with the cursor-bridge plugin (its own login and models)",
  ownBridge: true,
  render: (target) =>
    `// opencode.json: the plugin entry is this installation's path\n${json({
      $schema: OPENCODE_SCHEMA,
      plugin: [target.pluginEntry],
    })}`,
  file: {
    path: openCodePath,
    merge(existing, target, path) {
      const config = parseJsonObject(existing ?? "", path);
      const plugins = Array.isArray(config.plugin) ? config.plugin : [];
      const merged: Record<string, unknown> = { $schema: OPENCODE_SCHEMA, ...config };
      // The bare name "cursor-bridge" (older setups wrote it) is not a published package: replaced, never kept.
      merged.plugin = [...plugins.filter((entry) => !isOurPluginEntry(entry, target.pluginEntry)), target.pluginEntry];
      return json(merged);
    },
    next: pluginNext,
  },
};

const claudeCode: SetupClient = {
  name: "claude-code",
  summary: "Claude Code: environment variables",
  render: (target) =>
    shellLines(
      target,
      "# Claude Code: run these in the shell that starts `claude` (or add them to your shell profile).",
      [
        `export ANTHROPIC_BASE_URL=${target.origin}`,
        `export ANTHROPIC_AUTH_TOKEN=${keyShell(target)}`,
        "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
        target.model === "auto"
          ? "# Claude model ids map to Cursor's model of that family and version, else the family's newest; to pin one: export ANTHROPIC_MODEL=<id>"
          : `export ANTHROPIC_MODEL=${target.model}`,
      ],
    ),
};

const openai: SetupClient = {
  name: "openai",
  summary: "OpenAI and Anthropic SDKs: environment variables",
  render: (target) =>
    shellLines(target, "# OpenAI SDKs (Python, Node, …) read these; so do many tools built on them.", [
      `export OPENAI_BASE_URL=${target.origin}/v1`,
      `export OPENAI_API_KEY=${keyShell(target)}`,
      "# Anthropic SDKs:",
      `export ANTHROPIC_BASE_URL=${target.origin}`,
      `export ANTHROPIC_API_KEY=${keyShell(target)}`,
      `# Then use model "${target.model}", e.g. new OpenAI().chat.completions.create({ model: "${target.model}", messages })`,
    ]),
};

const curl: SetupClient = {
  name: "curl",
  summary: "curl: a streaming chat request",
  render: (target) => {
    const body = JSON.stringify({ model: target.model, stream: true, messages: [{ role: "user", content: "Hello" }] });
    const auth = target.keyRequired ? `  -H "authorization: Bearer $${KEY_ENV}" \\\n` : "";
    return `${keyNote(target)}curl -sSN ${target.origin}/v1/chat/completions \\\n  -H 'content-type: application/json' \\\n${auth}  -d '${body}'\n`;
  },
};

const CODEX_MARKER = "# Added by `cursor-bridge setup codex`; rewritten when it runs again.";

function codexProvider(target: SetupTarget): Array<readonly [string, string]> {
  return [
    ["name", tomlString("cursor-bridge")],
    ["base_url", tomlString(`${target.origin}/v1`)],
    ["env_key", tomlString(KEY_ENV)],
    ["wire_api", tomlString("responses")],
  ];
}

function codexDefaults(target: SetupTarget): Array<readonly [string, string]> {
  return [
    ["model", tomlString(target.model)],
    ["model_provider", tomlString(PROVIDER_ID)],
  ];
}

const codexKeyNote = (target: SetupTarget) =>
  target.keyRequired
    ? `Codex sends the key from ${KEY_ENV}: export it (the server's key) before running codex.`
    : `Codex sends the key from ${KEY_ENV}: export ${KEY_ENV}=${PLACEHOLDER_KEY} (any non-empty value) before running codex.`;

/** How Codex picks the effort (docs/clients.md "Choosing a model"). */
const CODEX_EFFORT_NOTE =
  'Effort: model_reasoning_effort = "high" in config.toml, or -c model_reasoning_effort=high per run, reaches ' +
  "Cursor as the model's effort (a variant id such as gpt-5.5-high-fast as the model works too).";

const codexOther = (target: SetupTarget) => `codex -c model_provider=${PROVIDER_ID} -m ${target.model}`;

const codex: SetupClient = {
  name: "codex",
  summary: "Codex CLI: a model provider in config.toml (Responses API)",
  render: (target) => {
    const lines = [
      "# ~/.codex/config.toml (or $CODEX_HOME/config.toml)",
      ...codexDefaults(target).map(([key, value]) => `${key} = ${value}`),
      "",
      `[model_providers.${PROVIDER_ID}]`,
      ...codexProvider(target).map(([key, value]) => `${key} = ${value}`),
      "",
      `# ${codexKeyNote(target)}`,
      `# Then: codex (without the two top-level lines: ${codexOther(target)})`,
      `# ${CODEX_EFFORT_NOTE}`,
      "",
    ];
    return lines.join("\n");
  },
  file: {
    path: (paths) => join(set(paths.env, "CODEX_HOME") ?? join(paths.homedir, ".codex"), "config.toml"),
    merge(existing, target) {
      const source = existing ?? "";
      const provider = rootStringValue(source, "model_provider");
      // The user's default provider (and its model) stay theirs; `-c model_provider=…` selects ours per run.
      const rootKeys = provider === undefined || provider === PROVIDER_ID ? codexDefaults(target) : [];
      return mergeToml(source, {
        rootKeys,
        marker: CODEX_MARKER,
        tables: [{ path: ["model_providers", PROVIDER_ID], body: codexProvider(target) }],
      });
    },
    next: (target, content) =>
      `${codexKeyNote(target)}\nThen run ${
        rootStringValue(content, "model_provider") === PROVIDER_ID
          ? "`codex`"
          : `\`${codexOther(target)}\` (your default provider is left as it was)`
      }.\n${CODEX_EFFORT_NOTE}\n`,
  },
};

/** Every client, in help order. */
export const SETUP_CLIENTS: readonly SetupClient[] = [opencode, opencodePlugin, claudeCode, codex, openai, curl];
