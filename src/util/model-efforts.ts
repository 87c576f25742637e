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

/** OpenCode `variants` for the tiers: one per tier, each sent as `reasoning_effort`; undefined when there are none. */
export function effortVariants(
  tiers: readonly string[] | undefined,
): Record<string, { reasoningEffort: string }> | undefined {
  if (tiers === undefined || tiers.length === 0) return undefined;
  return Object.fromEntries(tiers.map((tier) => [tier, { reasoningEffort: tier }]));
}
