/** Cursor model metadata → Anthropic's `GET /v1/models` list shape (served when the request has `anthropic-version`). */

import type { ModelInfo } from "../../backend/types.js";
import type { AnthropicModel, AnthropicModelList } from "./response.js";

/** `createdAt`: RFC 3339 time stamped on every entry (Cursor reports no release dates). */
export function toAnthropicModelList(models: readonly ModelInfo[], createdAt: string): AnthropicModelList {
  const data: AnthropicModel[] = models.map((model) => ({
    type: "model",
    id: model.id,
    display_name: model.displayName,
    created_at: createdAt,
  }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

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

/** The newest non-max model whose id contains `word`, preferring the variant whose thinking matches. */
function newest(models: readonly ModelInfo[], word: string, reasoning: boolean): ModelInfo | undefined {
  const family = models.filter((m) => m.id.toLowerCase().includes(word));
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
 * `claude-opus-4-6[1m]`) resolve by family against the upstream's current list: opus → the newest Claude Opus Cursor
 * lists (else the newest Sonnet), sonnet → the newest Sonnet, haiku → the newest Haiku (else the newest Composer, a
 * fast model); "newest" compares the numbers in the ids, and a thinking variant is preferred when the request asks
 * for thinking. Anything else passes unchanged (the engine answers 404 for an unknown id).
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
  const family = FAMILIES.find((name) => wanted.includes(name));
  if (family === undefined) return requested;
  const chosen = overrides[family];
  if (chosen !== undefined) return chosen;
  for (const word of [family, ...FALLBACK[family]]) {
    const match = newest(models, word, reasoning);
    if (match !== undefined) return match.id;
  }
  return requested;
}
