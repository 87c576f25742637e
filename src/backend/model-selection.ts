/**
 * Which model and parameters a turn sends (docs/protocol.md §6.1): a base model gets its default variant's values
 * with the person's choice on top, a flat variant id its base and that variant's values, an id with a variant suffix
 * the catalogue does not list is parsed against its base, and anything else goes as the flat id alone. A value the
 * model does not offer is refused here, before any Run.
 */
import { ProxyError } from "../util/errors.js";
import { effortSiblingIds } from "../util/model-efforts.js";
import { AUTO_MODEL_ALIAS, AUTO_MODEL_ID } from "./models.js";
import { EFFORT_TIERS, type EffortTier, type ModelChoice, type ModelInfo, type ModelSelection } from "./types.js";

/** The parameters that carry an effort tier. */
const EFFORT_PARAMETERS = ["effort", "reasoning"];

/** The rank of a wire value on the effort scale (`extra-high` is `xhigh`); undefined when it is no tier. */
function rankOf(value: string): number | undefined {
  const tier = value === "extra-high" ? "xhigh" : value;
  const rank = (EFFORT_TIERS as readonly string[]).indexOf(tier);
  return rank === -1 ? undefined : rank;
}

/** The model's wire value nearest to `tier` (a tie goes to the higher tier); undefined when it offers none. */
export function clampEffort(values: readonly string[], tier: EffortTier): string | undefined {
  const wanted = rankOf(tier) ?? 0;
  let best: { value: string; distance: number; rank: number } | undefined;
  for (const value of values) {
    const rank = rankOf(value);
    if (rank === undefined) continue;
    const distance = Math.abs(rank - wanted);
    if (best === undefined || distance < best.distance || (distance === best.distance && rank > best.rank)) {
      best = { value, distance, rank };
    }
  }
  return best?.value;
}

function notOffered(model: string, id: string, value: string, values: readonly string[] | undefined): ProxyError {
  const allowed = values === undefined ? "it has no such parameter" : `allowed values: ${values.join(", ")}`;
  return new ProxyError("invalid_request", `The model \`${model}\` does not offer ${id}=${value} (${allowed}).`, {
    param: "model",
    detail: "unsupported_model_parameter",
  });
}

/** Applies the person's choice to a base model's values. */
function applyChoice(base: ModelInfo, params: Record<string, string>, choice: ModelChoice): void {
  const parameters = base.parameters ?? [];
  const find = (id: string) => parameters.find((p) => p.id === id);
  const effort = parameters.find((p) => EFFORT_PARAMETERS.includes(p.id));
  if (choice.effort !== undefined) {
    const thinking = find("thinking");
    if (choice.effort === "none" && effort?.values.includes("none") !== true && thinking !== undefined) {
      params.thinking = "false";
    } else if (effort !== undefined) {
      const value = clampEffort(effort.values, choice.effort);
      if (value !== undefined) params[effort.id] = value;
    }
  }
  if (choice.thinking !== undefined && find("thinking") !== undefined) params.thinking = String(choice.thinking);
  const fast = find("fast");
  if (fast !== undefined) {
    // Cursor's default is fast on composer and the codex line: say `false` unless the person asked for fast.
    const value = String(choice.fast === true);
    if (!fast.values.includes(value)) throw notOffered(base.id, "fast", value, fast.values);
    params.fast = value;
  } else if (choice.fast === true) throw notOffered(base.id, "fast", "true", undefined);
  if (choice.context === undefined && choice.contextIfOffered !== undefined) {
    if (find("context")?.values.includes(choice.contextIfOffered) === true) params.context = choice.contextIfOffered;
  }
  if (choice.context !== undefined) {
    const context = find("context");
    if (context?.values.includes(choice.context) !== true) {
      throw notOffered(base.id, "context", choice.context, context?.values);
    }
    params.context = choice.context;
  }
}

/** Token of one value in a variant id (`thinking`, the tier, a non-default context, `fast`). */
function tokensOf(base: ModelInfo, params: Readonly<Record<string, string>>): string[] {
  const tokens: string[] = [];
  if (params.thinking === "true") tokens.push("thinking");
  for (const id of EFFORT_PARAMETERS) {
    const value = params[id];
    if (value !== undefined) tokens.push(value === "extra-high" ? "xhigh" : value);
  }
  if (params.context !== undefined && params.context !== base.defaults?.params.context) tokens.push(params.context);
  if (params.fast === "true") tokens.push("fast");
  return tokens;
}

function sameParams(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

/** The id a selection runs as: the catalogue's variant with exactly these values, else base + tokens. */
function ranAsOf(models: readonly ModelInfo[], base: ModelInfo, params: Readonly<Record<string, string>>): string {
  const variant = models.find((m) => m.variant?.base === base.id && sameParams(m.variant.params, params));
  if (variant !== undefined) return variant.id;
  return [base.id, ...tokensOf(base, params)].join("-");
}

function selectionOf(models: readonly ModelInfo[], base: ModelInfo, params: Record<string, string>): ModelSelection {
  const parameters = (base.parameters ?? [])
    .filter((p) => params[p.id] !== undefined)
    .map((p) => ({ id: p.id, value: params[p.id] as string }));
  return { modelId: base.id, parameters, maxMode: params.context === "1m", ranAs: ranAsOf(models, base, params) };
}

/**
 * Parses `<base>-<tokens>` for an id the catalogue does not list (`claude-opus-4-8-thinking-low`,
 * `gpt-5.5-xhigh-fast`): the longest base id it starts with whose tokens are all parameter words. Returns
 * undefined when no base fits (the id is then unknown); throws when a token names a value the model lacks.
 */
function parseVariantId(models: readonly ModelInfo[], id: string): ModelSelection | undefined {
  const wanted = id.trim().toLowerCase();
  const bases = models
    .filter((m) => m.parameters !== undefined && wanted.startsWith(`${m.id.toLowerCase()}-`))
    .sort((a, b) => b.id.length - a.id.length);
  for (const base of bases) {
    const rest = wanted.slice(base.id.length + 1).replaceAll("extra-high", "xhigh");
    const tokens = rest.split("-");
    const choice: ModelChoice = {};
    let effort: string | undefined;
    let thinking = false;
    let understood = true;
    for (const token of tokens) {
      if (token === "thinking") thinking = true;
      else if (token === "fast") choice.fast = true;
      else if (/^\d+(?:k|m)$/.test(token)) choice.context = token;
      else if (rankOf(token) !== undefined && effort === undefined) effort = token;
      else understood = false;
    }
    if (!understood) continue;
    const params: Record<string, string> = { ...(base.defaults?.params ?? {}) };
    const parameters = base.parameters ?? [];
    const thinkingParameter = parameters.find((p) => p.id === "thinking");
    if (thinkingParameter !== undefined) params.thinking = String(thinking);
    else if (thinking) throw notOffered(base.id, "thinking", "true", undefined);
    if (effort !== undefined) {
      const parameter = parameters.find((p) => EFFORT_PARAMETERS.includes(p.id));
      const value = parameter?.values.find((v) => rankOf(v) === rankOf(effort as string));
      if (parameter === undefined || value === undefined) {
        throw notOffered(base.id, parameter?.id ?? "effort", effort, parameter?.values);
      }
      params[parameter.id] = value;
    }
    applyChoice(base, params, choice);
    return selectionOf(models, base, params);
  }
  return undefined;
}

/**
 * What a turn for `model` (an entry of `models`) sends: a base model's defaults with `choice` applied, a variant's
 * own values (the id the person picked wins over effort controls), or the flat id alone.
 */
export function selectModel(models: readonly ModelInfo[], model: ModelInfo, choice: ModelChoice = {}): ModelSelection {
  if (model.parameters !== undefined) {
    const params: Record<string, string> = { ...(model.defaults?.params ?? {}) };
    applyChoice(model, params, choice);
    return selectionOf(models, model, params);
  }
  const variant = model.variant;
  const base = variant === undefined ? undefined : models.find((m) => m.id === variant.base);
  if (variant !== undefined && base !== undefined) {
    return {
      modelId: base.id,
      parameters: (base.parameters ?? [])
        .filter((p) => variant.params[p.id] !== undefined)
        .map((p) => ({ id: p.id, value: variant.params[p.id] as string })),
      maxMode: variant.maxMode || variant.params.context === "1m",
      ranAs: model.id,
    };
  }
  // A flat id takes no parameters; an asked-for context tier (a 1m window) cannot be sent, so it is refused rather
  // than run at the model's own window. Effort controls are left to the id: clients send them with every request.
  if (choice.context !== undefined) throw notOffered(model.id, "context", choice.context, undefined);
  const id = model.id === AUTO_MODEL_ALIAS ? AUTO_MODEL_ID : model.id;
  return { modelId: id, parameters: [], maxMode: false, ranAs: model.id };
}

/**
 * The listed flat id that runs a flat model at the effort tier the person chose, when Cursor lists one
 * (`gpt-5.3-codex` with `high` → `gpt-5.3-codex-high`, `gpt-5.3-codex-fast` with `xhigh` →
 * `gpt-5.3-codex-xhigh-fast`): a flat id takes no parameters, so without it the tier would be dropped and the model
 * run at its default. Undefined for a parameterised model or variant, an id that already names a tier (the id the
 * person picked wins), or when no such id is listed.
 */
export function effortSibling(
  models: readonly ModelInfo[],
  model: ModelInfo,
  choice: ModelChoice = {},
): ModelInfo | undefined {
  if (choice.effort === undefined || model.parameters !== undefined || model.variant !== undefined) return undefined;
  for (const wanted of effortSiblingIds(model.id, choice.effort)) {
    const sibling = models.find((m) => m.id.toLowerCase() === wanted && m.parameters === undefined);
    if (sibling !== undefined) return sibling;
  }
  return undefined;
}

/**
 * Resolves an id the model list does not hold as a variant suffix on a base model (see {@link parseVariantId});
 * the `ModelInfo` it stands for is its base.
 */
export function selectByVariantId(
  models: readonly ModelInfo[],
  id: string,
): { model: ModelInfo; selection: ModelSelection } | undefined {
  const selection = parseVariantId(models, id);
  if (selection === undefined) return undefined;
  const model = models.find((m) => m.id === selection.modelId);
  return model === undefined ? undefined : { model, selection };
}
