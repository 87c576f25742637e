/**
 * Model listing (docs/protocol.md §6): `GetUsableModels`, cached with a TTL and fetched single-flight. `auto` is
 * Cursor's server-side routing, sent as `model_id = "default"` (EPH commit 5e5e5cd). Image support comes from
 * `AiService/AvailableModels.supports_images` where it answers, else a family table, with config overrides on top.
 */
import type { ModelDetails } from "../gen/agent/v1/models_pb.js";
import type { AvailableModelRow } from "../protocol/cursor/available-models.js";
import type { ListModelsOptions, ModelInfo, ModelParameterInfo } from "./types.js";

/** The alias callers use for Cursor's automatic model choice. */
export const AUTO_MODEL_ALIAS = "auto";
/** What `auto` is sent as. */
export const AUTO_MODEL_ID = "default";

/** Finds a model by id or alias (case-insensitive); `auto` is always an alias of Cursor's `default`. */
export function findModel(models: readonly ModelInfo[], requested: string): ModelInfo | undefined {
  const wanted = requested.trim().toLowerCase();
  const target = wanted === AUTO_MODEL_ALIAS ? AUTO_MODEL_ID : wanted;
  return (
    models.find((m) => m.id.toLowerCase() === target) ??
    models.find((m) => m.aliases.some((alias) => alias.toLowerCase() === wanted))
  );
}

/**
 * The id of the model Cursor says served a turn (`routed_model.display_name`, cursor-protocol-addendum-2.md §4): the
 * model whose display name (else id or alias) matches; the display name itself when none does.
 */
export function servedModelId(models: readonly ModelInfo[], displayName: string): string {
  const name = displayName.trim();
  const lower = name.toLowerCase();
  const match =
    models.find((m) => m.displayName === name) ??
    models.find((m) => m.displayName.toLowerCase() === lower) ??
    findModel(models, name);
  return match?.id ?? name;
}

/** @default cache lifetime of the model list: 5 minutes. */
export const DEFAULT_MODELS_CACHE_TTL_MS = 5 * 60 * 1000;

/** The model id to send for a requested model (`auto` → `default`). */
export function resolveModelId(model: string): string {
  return model === AUTO_MODEL_ALIAS ? AUTO_MODEL_ID : model;
}

/**
 * Which families accept image input when Cursor does not say (its agent model list carries no image flag; the
 * legacy `AvailableModels` does, where it answers). Automatic routing accepts images; unknown families do not.
 */
const VISION_FAMILIES: ReadonlyArray<[RegExp, boolean]> = [
  [/^(default|auto)$/, true],
  [/^claude-/, true],
  [/^gpt-/, true],
  [/^gemini-/, true],
  [/^composer-/, true],
  [/^grok-code/, false],
  [/^grok-/, true],
];

/** Image support from the family table. */
export function visionFromFamily(modelId: string): boolean {
  return VISION_FAMILIES.find(([pattern]) => pattern.test(modelId))?.[1] ?? false;
}

/** Where image support comes from, most authoritative first: config overrides, Cursor's answer, the family table. */
export interface VisionSources {
  /** `id` = accepts images, `-id` = does not. */
  overrides?: readonly string[];
  /** `AvailableModels` answer: model name → supports_images; undefined when it did not answer. */
  upstream?: ReadonlyMap<string, boolean>;
}

/** Whether `modelId` accepts image input. */
export function visionFor(modelId: string, sources: VisionSources = {}): boolean {
  const overrides = sources.overrides ?? [];
  if (overrides.includes(`-${modelId}`)) return false;
  if (overrides.includes(modelId)) return true;
  if (modelId === AUTO_MODEL_ID || modelId === AUTO_MODEL_ALIAS) return true;
  return sources.upstream?.get(modelId) ?? visionFromFamily(modelId);
}

/** One `ModelDetails` as `ModelInfo`; the display name is the first non-empty of EPH's candidates (§6). */
export function toModelInfo(details: ModelDetails, vision: VisionSources = {}): ModelInfo {
  const displayName =
    [details.displayName, details.displayNameShort, details.displayModelId, details.aliases[0], details.modelId].find(
      (name) => name !== undefined && name !== "",
    ) ?? details.modelId;
  const aliases = [...details.aliases];
  if (details.modelId === AUTO_MODEL_ID && !aliases.includes(AUTO_MODEL_ALIAS)) aliases.push(AUTO_MODEL_ALIAS);
  return {
    id: details.modelId,
    displayName,
    aliases,
    reasoning: details.thinkingDetails !== undefined,
    maxMode: details.maxMode ?? false,
    vision: visionFor(details.modelId, vision),
  };
}

/** The model list with an `auto` entry guaranteed (added when the server lists no `default` model). */
export function toModelList(models: readonly ModelDetails[], vision: VisionSources = {}): ModelInfo[] {
  const list = models.filter((m) => m.modelId !== "").map((m) => toModelInfo(m, vision));
  if (!list.some((m) => m.id === AUTO_MODEL_ID || m.id === AUTO_MODEL_ALIAS)) {
    const auto = { id: AUTO_MODEL_ALIAS, displayName: "Auto", aliases: [], reasoning: false, maxMode: false };
    list.unshift({ ...auto, vision: visionFor(AUTO_MODEL_ALIAS, vision) });
  }
  return list;
}

/** A parameter's values: its definition's, then any more its variants use (the definition layout is uncertain). */
function parameterValues(model: AvailableModelRow): ModelParameterInfo[] {
  const out = new Map<string, string[]>();
  for (const definition of model.parameterDefinitions) {
    const type = definition.parameterType?.type;
    const values =
      type?.case === "enumParameter"
        ? type.value.values.map((v) => v.value)
        : type?.case === "booleanParameter"
          ? type.value.values.map((v) => String(v.value))
          : [];
    out.set(definition.id, values);
  }
  for (const variant of model.variants) {
    for (const { id, value } of variant.parameterValues) {
      const values = out.get(id) ?? [];
      if (!values.includes(value)) values.push(value);
      out.set(id, values);
    }
  }
  return [...out].map(([id, values]) => ({
    id,
    values: values.length === 0 && id !== "context" ? ["false", "true"] : values,
  }));
}

/**
 * The window a `context` parameter value names (`200k`, `272k`, `300k`, `1m`): a variant's own context tier is the
 * surest source of its window, since `context_token_limit` (15) and `context_token_limit_for_max_mode` (16) often
 * arrive empty (cursor-protocol-addendum-3.md P15). Undefined for anything else.
 */
export function contextTier(value: string | undefined): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([km])$/i.exec(value?.trim() ?? "");
  if (match === null) return undefined;
  const tokens = Math.round(Number(match[1]) * (match[2]?.toLowerCase() === "m" ? 1_000_000 : 1_000));
  return tokens > 0 ? tokens : undefined;
}

/**
 * The parameterised catalogue (docs/protocol.md §6.1) joined with the flat list: every base model of `available`
 * that has parameters or variants becomes an entry with its parameters and default variant, and each variant an
 * entry with its base and values (the flat row of the same id, when GetUsableModels lists it, gains them).
 */
export function joinCatalogue(
  flat: readonly ModelInfo[],
  available: readonly AvailableModelRow[],
  vision: VisionSources = {},
): ModelInfo[] {
  const list = flat.map((m) => ({ ...m }));
  const byId = new Map(list.map((m) => [m.id, m]));
  const upsert = (entry: ModelInfo): ModelInfo => {
    const existing = byId.get(entry.id);
    if (existing === undefined) {
      list.push(entry);
      byId.set(entry.id, entry);
      return entry;
    }
    for (const alias of entry.aliases) if (!existing.aliases.includes(alias)) existing.aliases.push(alias);
    return existing;
  };
  for (const model of available) {
    if (model.name === "" || (model.parameterDefinitions.length === 0 && model.variants.length === 0)) {
      // A flat model's row still says its context window, which its GetUsableModels entry lacks.
      const row = byId.get(model.name);
      if (row !== undefined && row.contextWindow == null && model.contextTokenLimit !== undefined) {
        row.contextWindow = model.contextTokenLimit;
      }
      continue;
    }
    const parameters = parameterValues(model);
    const defaultVariant = model.variants.find((v) => v.isDefaultNonMaxConfig === true) ?? model.variants[0];
    const idOf = (v: (typeof model.variants)[number]) => v.legacySlug || v.variantStringRepresentation || undefined;
    const upstream = model.supportsImages === undefined ? undefined : new Map([[model.name, model.supportsImages]]);
    const base = upsert({
      id: model.name,
      displayName: model.clientDisplayName || model.name,
      aliases: [...model.idAliases],
      reasoning: parameters.some((p) => p.id === "thinking"),
      maxMode: false,
      vision: visionFor(model.name, upstream === undefined ? vision : { ...vision, upstream }),
    });
    base.parameters = parameters;
    base.defaults = {
      params: Object.fromEntries((defaultVariant?.parameterValues ?? []).map((p) => [p.id, p.value])),
      variant: defaultVariant === undefined ? undefined : idOf(defaultVariant),
    };
    base.contextWindow = contextTier(base.defaults.params.context) ?? model.contextTokenLimit ?? null;
    for (const variant of model.variants) {
      const id = idOf(variant);
      if (id === undefined) continue;
      const params = Object.fromEntries(variant.parameterValues.map((p) => [p.id, p.value]));
      const alias = variant.variantStringRepresentation;
      const entry = upsert({
        id,
        displayName: variant.displayName || id,
        aliases: alias !== undefined && alias !== "" && alias !== id ? [alias] : [],
        reasoning: params.thinking === "true",
        maxMode: variant.isMaxMode === true,
        vision: base.vision,
      });
      if (entry === base) continue;
      // A variant takes images as its base does (Cursor answers per base model), whatever the family table says of a
      // flat id listed before the join (`cursor-grok-4.6-high` for base `grok-4.6`); `--vision-models` still wins.
      entry.vision = visionFor(id, { ...vision, upstream: new Map([[id, base.vision]]) });
      entry.variant = { base: model.name, params, maxMode: variant.isMaxMode === true };
      entry.maxMode = variant.isMaxMode === true;
      const maxContext = model.contextTokenLimitForMaxMode;
      entry.contextWindow =
        contextTier(params.context) ??
        (variant.isMaxMode === true ? (maxContext ?? null) : (model.contextTokenLimit ?? null));
    }
  }
  return list;
}

/**
 * A TTL cache around a model fetch, single-flight: callers while a fetch is in flight share it (the first caller's
 * signal ends it). A caller that joined a prefetch (serve's fetch at start) which failed fetches again itself.
 */
export interface ModelCatalog {
  list(signal?: AbortSignal, options?: ListModelsOptions): Promise<ModelInfo[]>;
  /** The cached entry for an id or alias, without fetching. */
  peek(model: string): ModelInfo | undefined;
}

/** Creates the cached catalog. */
export function createModelCatalog(options: {
  fetch: (signal?: AbortSignal) => Promise<ModelDetails[]>;
  /**
   * `AvailableModels` with `use_model_parameters` (image support, and the parameterised catalogue joined with the
   * flat list); failures and absence fall back to the flat list and the family table.
   */
  fetchAvailable?: (signal?: AbortSignal) => Promise<AvailableModelRow[]>;
  visionOverrides?: readonly string[];
  ttlMs: number;
  now: () => number;
}): ModelCatalog {
  const fetchAvailable = async (signal?: AbortSignal): Promise<AvailableModelRow[] | undefined> => {
    if (options.fetchAvailable === undefined) return undefined;
    try {
      return await options.fetchAvailable(signal);
    } catch {
      return undefined;
    }
  };
  let cached: { models: ModelInfo[]; at: number } | undefined;
  let inFlight: Promise<ModelInfo[]> | undefined;
  let inFlightIsPrefetch = false;
  const list = (signal?: AbortSignal, how?: ListModelsOptions): Promise<ModelInfo[]> => {
    if (cached !== undefined && options.now() - cached.at < options.ttlMs) return Promise.resolve(cached.models);
    if (inFlight !== undefined && inFlightIsPrefetch && how?.prefetch !== true) {
      // The prefetch's failure is not this caller's: it fetches as it would have without it (once the prefetch ended).
      return inFlight.catch((error: unknown) => {
        if (signal?.aborted === true) throw error;
        return list(signal, how);
      });
    }
    if (inFlight === undefined) inFlightIsPrefetch = how?.prefetch === true;
    inFlight ??= Promise.all([options.fetch(signal), fetchAvailable(signal)])
      .then(([details, available]) => {
        const overrides = options.visionOverrides ?? [];
        let upstream: Map<string, boolean> | undefined;
        if (available !== undefined) {
          upstream = new Map();
          for (const model of available) {
            if (model.supportsImages !== undefined) upstream.set(model.name, model.supportsImages);
          }
        }
        const vision = upstream === undefined ? { overrides } : { overrides, upstream };
        const flat = toModelList(details, vision);
        const models = available === undefined ? flat : joinCatalogue(flat, available, vision);
        cached = { models, at: options.now() };
        return models;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };
  return {
    list,
    peek(model) {
      const id = resolveModelId(model);
      return cached?.models.find((m) => m.id === id || m.id === model || m.aliases.includes(model));
    },
  };
}
