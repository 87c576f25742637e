/**
 * Model listing (docs/protocol.md §6): `GetUsableModels`, cached with a TTL and fetched single-flight. `auto` is
 * Cursor's server-side routing, sent as `model_id = "default"` (EPH commit 5e5e5cd). Image support comes from
 * `AiService/AvailableModels.supports_images` where it answers, else a family table, with config overrides on top.
 */
import type { ModelDetails } from "../gen/agent/v1/models_pb.js";
import type { AvailableModel } from "../gen/aiserver/v1/ai_service_pb.js";
import type { ModelInfo } from "./types.js";

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

/** A TTL cache around a model fetch, single-flight. */
export interface ModelCatalog {
  list(signal?: AbortSignal): Promise<ModelInfo[]>;
  /** The cached entry for an id or alias, without fetching. */
  peek(model: string): ModelInfo | undefined;
}

/** Creates the cached catalog. */
export function createModelCatalog(options: {
  fetch: (signal?: AbortSignal) => Promise<ModelDetails[]>;
  /** `AvailableModels` (image support); failures and absence fall back to the family table. */
  fetchAvailable?: (signal?: AbortSignal) => Promise<AvailableModel[]>;
  visionOverrides?: readonly string[];
  ttlMs: number;
  now: () => number;
}): ModelCatalog {
  const upstreamVision = async (signal?: AbortSignal): Promise<Map<string, boolean> | undefined> => {
    if (options.fetchAvailable === undefined) return undefined;
    try {
      const models = await options.fetchAvailable(signal);
      const flags = new Map<string, boolean>();
      for (const model of models) if (model.supportsImages !== undefined) flags.set(model.name, model.supportsImages);
      return flags;
    } catch {
      return undefined;
    }
  };
  let cached: { models: ModelInfo[]; at: number } | undefined;
  let inFlight: Promise<ModelInfo[]> | undefined;
  return {
    list(signal) {
      if (cached !== undefined && options.now() - cached.at < options.ttlMs) return Promise.resolve(cached.models);
      inFlight ??= Promise.all([options.fetch(signal), upstreamVision(signal)])
        .then(([details, upstream]) => {
          const overrides = options.visionOverrides ?? [];
          const models = toModelList(details, upstream === undefined ? { overrides } : { overrides, upstream });
          cached = { models, at: options.now() };
          return models;
        })
        .finally(() => {
          inFlight = undefined;
        });
      return inFlight;
    },
    peek(model) {
      const id = resolveModelId(model);
      return cached?.models.find((m) => m.id === id || m.id === model || m.aliases.includes(model));
    },
  };
}
