/**
 * Model names, once for all surfaces: what a client's model id stands for before the engine resolves it.
 * 1. a user alias (`--model-alias NAME=ID`, env `CURSOR_BRIDGE_MODEL_ALIASES`, config `modelAliases`; names match
 *    case-insensitively) names its Cursor model;
 * 2. an Anthropic id Cursor does not list (`claude-sonnet-4-5-20250929`) resolves by family (`--anthropic-models`
 *    fixes a family's model, else the family's model of that version, else the newest of the family Cursor lists);
 * 3. anything else passes unchanged (the engine answers 404 `model_not_found` for an id Cursor does not know).
 * The same resolution serves every door, and `/v1/models` lists the aliases with what they resolve to.
 */
import type { ModelInfo } from "../../backend/types.js";

const FAMILIES = ["opus", "sonnet", "haiku"] as const;
/** A Claude model family, as Claude Code's model ids name it. */
export type Family = (typeof FAMILIES)[number];

/** Parses `family=id` entries (the `--anthropic-models` setting) into overrides; malformed entries are ignored. */
export function parseFamilyOverrides(entries: readonly string[]): Partial<Record<Family, string>> {
  const overrides: Partial<Record<Family, string>> = {};
  for (const entry of entries) {
    const [family, id] = entry.split("=", 2);
    if (id !== undefined && id !== "" && (FAMILIES as readonly string[]).includes(family ?? "")) {
      overrides[family as Family] = id;
    }
  }
  return overrides;
}

/** The numbers in a model id, for "newest" comparisons: `claude-4.5-sonnet` → [4, 5]. */
function versionOf(id: string): number[] {
  return (id.match(/\d+/g) ?? []).map(Number);
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? -1) - (b[i] ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * The version a Claude id names, whichever way round it is spelled: `claude-sonnet-4-5-20250929`,
 * `claude-3-5-sonnet-latest`, `claude-4.5-sonnet-thinking` and `claude-opus-4-8` give "4.5", "3.5", "4.5" and "4.8"
 * (the numbers after the family word is dropped, up to the first other word; a date and `[1m]` are no part of it).
 */
export function claudeVersion(id: string, family: Family): string {
  const words = id
    .toLowerCase()
    .replace(/\[1m\]$/, "")
    .split("-")
    .filter((word) => word !== "claude" && word !== family);
  const numbers: string[] = [];
  for (const word of words) {
    if (!/^\d+(?:\.\d+)*$/.test(word)) break;
    if (!/^\d{8}$/.test(word)) numbers.push(...word.split("."));
  }
  return numbers.map(Number).join(".");
}

/**
 * The newest non-max model whose id contains `word`, preferring the variant whose thinking matches; with `version`,
 * a model of exactly that version when Cursor lists one.
 */
function newest(
  models: readonly ModelInfo[],
  word: string,
  reasoning: boolean,
  version?: string,
): ModelInfo | undefined {
  // Base models and flat ids only: a variant id would fix the effort the request's own controls choose.
  const listed = models.filter((m) => m.variant === undefined && m.id.toLowerCase().includes(word));
  const same =
    version === undefined || version === ""
      ? []
      : listed.filter((m) => claudeVersion(m.id, word as Family) === version);
  const family = same.length > 0 ? same : listed;
  // Prefer models without max mode; where Cursor marks every model of the family as max mode, take those.
  const plain = family.filter((m) => !m.maxMode);
  const candidates = plain.length > 0 ? plain : family;
  return candidates.sort(
    (a, b) =>
      compareVersions(versionOf(b.id), versionOf(a.id)) ||
      Number(b.reasoning === reasoning) - Number(a.reasoning === reasoning),
  )[0];
}

/** Where each Anthropic family goes when Cursor lists no model of that family. */
const FALLBACK: Record<Family, readonly string[]> = { opus: ["sonnet"], sonnet: [], haiku: ["composer"] };

/**
 * Resolves the model id an Anthropic client sent. Ids Cursor knows (id or alias, case-insensitive, and `auto`) pass
 * unchanged. Anthropic ids (`claude-opus-5-5`, `claude-sonnet-4-5-20250929`, `claude-3-5-haiku-latest`,
 * `claude-opus-4-6[1m]`) resolve by family against the upstream's current list: the model of the family and version
 * the id names when Cursor lists one (`claude-sonnet-4-5` → `claude-4.5-sonnet`), else opus → the newest Claude Opus
 * Cursor lists (else the newest Sonnet), sonnet → the newest Sonnet, haiku → the newest Haiku (else the newest
 * Composer, a fast model); "newest" compares the numbers in the ids, non-max models are preferred, and a thinking
 * variant is preferred when the request asks for thinking. Anything else passes unchanged (the engine answers 404
 * for an unknown id).
 */
export function resolveAnthropicModel(
  requested: string,
  models: readonly ModelInfo[],
  reasoning: boolean,
  overrides: Readonly<Partial<Record<Family, string>>> = {},
): string {
  const wanted = requested.trim().toLowerCase();
  const known = models.some(
    (m) => m.id.toLowerCase() === wanted || m.aliases.some((alias) => alias.toLowerCase() === wanted),
  );
  if (known || wanted === "auto" || !wanted.startsWith("claude-")) return requested;
  // A variant id of a base Cursor lists (`claude-opus-4-8-thinking-xhigh`, or a mistyped one) is the engine's to read:
  // as a family it would run the base's default values. A date or `-latest` after the base is Anthropic's, and so is
  // a minor version (`claude-sonnet-5-5` after `claude-sonnet-5`: another version, resolved as a family below).
  const base = models.find((m) => m.parameters !== undefined && wanted.startsWith(`${m.id.toLowerCase()}-`));
  if (base !== undefined) {
    const words = wanted
      .slice(base.id.length + 1)
      .replace(/\[1m\]$/, "")
      .split("-");
    const anthropic =
      /^\d{1,2}$/.test(words[0] ?? "") || words.every((word) => /^\d{8}$/.test(word) || word === "latest");
    if (!anthropic) return requested;
  }
  const family = FAMILIES.find((name) => wanted.includes(name));
  if (family === undefined) return requested;
  const chosen = overrides[family];
  if (chosen !== undefined) return chosen;
  const version = claudeVersion(wanted, family);
  for (const word of [family, ...FALLBACK[family]]) {
    const match = newest(models, word, reasoning, word === family ? version : undefined);
    if (match !== undefined) return match.id;
  }
  return requested;
}

/** Parses `NAME=ID` alias entries (malformed ones are skipped; config/ has already refused them). */
export function parseModelAliases(entries: readonly string[]): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const entry of entries) {
    const at = entry.indexOf("=");
    const name = entry.slice(0, at).trim();
    const id = entry.slice(at + 1).trim();
    if (at > 0 && name !== "" && id !== "") aliases.set(name, id);
  }
  return aliases;
}

/** One user alias as `/v1/models` lists it. */
export interface ModelAlias {
  name: string;
  /** The Cursor model id the alias resolves to. */
  target: string;
}

/** Options of {@link createModelNames}. */
export interface ModelNamesOptions {
  /** `NAME=ID` entries. @default [] */
  aliases?: readonly string[] | undefined;
  /** `family=id` entries (`--anthropic-models`). @default [] */
  anthropicModels?: readonly string[] | undefined;
}

/** The model-name resolver every surface shares. */
export interface ModelNames {
  /** The user aliases, in configuration order. */
  readonly aliases: readonly ModelAlias[];
  /**
   * The id to hand the engine for `requested`; `listModels` is called only for an Anthropic id that is no alias.
   * `reasoning`: the request wants thinking (a family prefers its thinking variant then).
   */
  resolve(requested: string, reasoning: boolean, listModels: () => Promise<ModelInfo[]>): Promise<string>;
}

/** Creates the resolver. */
export function createModelNames(options: ModelNamesOptions = {}): ModelNames {
  const parsed = parseModelAliases(options.aliases ?? []);
  const aliases = [...parsed].map(([name, target]) => ({ name, target }));
  const byName = new Map(aliases.map((alias) => [alias.name.toLowerCase(), alias.target]));
  const families = parseFamilyOverrides(options.anthropicModels ?? []);
  return {
    aliases,
    async resolve(requested, reasoning, listModels) {
      const alias = byName.get(requested.trim().toLowerCase());
      if (alias !== undefined) return alias;
      if (!requested.trim().toLowerCase().startsWith("claude-")) return requested;
      return resolveAnthropicModel(requested, await listModels(), reasoning, families);
    },
  };
}
