/**
 * The effort tiers a `GET /v1/models` entry offers, as `reasoning_effort` values: read from the `cursor_bridge`
 * object of a parameterised base model (its `effort` or `reasoning` parameter; docs/api.md), with the catalogue's
 * `extra-high` spelled `xhigh`. `setup opencode` and the OpenCode plugin make one OpenCode variant of each.
 */

/** The `reasoning_effort` values the bridge takes (OpenAI's, and `max`: chat/request.ts `REASONING_EFFORTS`). */
const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/** The tiers of a `cursor_bridge` extension object, in order and once each; empty when it has none. */
export function effortTiersOf(extension: unknown): string[] {
  if (typeof extension !== "object" || extension === null) return [];
  const parameters = (extension as { parameters?: unknown }).parameters;
  if (!Array.isArray(parameters)) return [];
  const effort = parameters.find(
    (p): p is { id: string; values: unknown[] } =>
      typeof p === "object" && p !== null && (p.id === "effort" || p.id === "reasoning") && Array.isArray(p.values),
  );
  const tiers = (effort?.values ?? [])
    .map((value) => (value === "extra-high" ? "xhigh" : value))
    .filter((value): value is string => typeof value === "string" && EFFORTS.includes(value));
  return [...new Set(tiers)];
}

/** The tier an id's last word names (before a `-fast` suffix; `extra-high` is `xhigh`), or undefined. */
export function tierNamedBy(id: string): string | undefined {
  const lower = id.toLowerCase();
  const stem = lower.endsWith("-fast") ? lower.slice(0, -"-fast".length) : lower;
  if (stem.endsWith("-extra-high")) return "xhigh";
  const last = stem.slice(stem.lastIndexOf("-") + 1);
  return EFFORTS.includes(last) ? last : undefined;
}

/**
 * The ids (lowercase, each spelling of the tier) that run flat model `id` at `tier`: `gpt-5.3-codex` with `high` →
 * `gpt-5.3-codex-high`, `gpt-5.3-codex-fast` with `xhigh` → `gpt-5.3-codex-xhigh-fast`. None when `id` names a tier
 * itself (the id the person picked wins).
 */
export function effortSiblingIds(id: string, tier: string): string[] {
  if (tierNamedBy(id) !== undefined) return [];
  const lower = id.toLowerCase();
  const fast = lower.endsWith("-fast");
  const stem = fast ? lower.slice(0, -"-fast".length) : lower;
  const spellings = tier === "xhigh" ? ["xhigh", "extra-high"] : [tier];
  return spellings.map((spelling) => `${stem}-${spelling}${fast ? "-fast" : ""}`);
}

/** The tiers a flat id has a sibling id for in `listed` (lowercase ids): what `reasoning_effort` changes on it. */
export function siblingTiers(id: string, listed: ReadonlySet<string>): string[] {
  return EFFORTS.filter((tier) => effortSiblingIds(id, tier).some((sibling) => listed.has(sibling)));
}

/** The variants OpenCode (1.18) makes of its own for an `@ai-sdk/openai-compatible` model marked `reasoning`. */
const OPENCODE_OWN_VARIANTS = ["low", "medium", "high"];

/**
 * OpenCode `variants` for the tiers that do something on a model: one per tier, each sent as `reasoning_effort`.
 * OpenCode adds its own low/medium/high to a reasoning model's config entry and leaves out those marked `disabled`,
 * so `disableOwn` (a config entry of a reasoning model) marks the ones the model lacks that way (an id with the tier
 * in it then shows none). The plugin's model hook needs no such marks: OpenCode adds its own there only when
 * `variants` is absent.
 */
export function effortVariants(
  tiers: readonly string[] | undefined,
  { disableOwn }: { disableOwn: boolean },
): Record<string, { reasoningEffort: string } | { disabled: true }> {
  const offered = tiers ?? [];
  const others = disableOwn ? OPENCODE_OWN_VARIANTS.filter((tier) => !offered.includes(tier)) : [];
  return Object.fromEntries([
    ...offered.map((tier) => [tier, { reasoningEffort: tier }]),
    ...others.map((tier) => [tier, { disabled: true }]),
  ]);
}
