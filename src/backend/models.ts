/**
 * Model listing (cursor-protocol.md §6): `GetUsableModels`, cached with a TTL and fetched single-flight. `auto` is
 * Cursor's server-side routing, sent as `model_id = "default"` (EPH commit 5e5e5cd).
 */
import type { ModelDetails } from "../gen/agent/v1/models_pb.js";
import type { ModelInfo } from "./types.js";

/** The alias callers use for Cursor's automatic model choice. */
export const AUTO_MODEL_ALIAS = "auto";
/** What `auto` is sent as. */
export const AUTO_MODEL_ID = "default";
/** @default cache lifetime of the model list: 5 minutes. */
export const DEFAULT_MODELS_CACHE_TTL_MS = 5 * 60 * 1000;

/** The model id to send for a requested model (`auto` → `default`). */
export function resolveModelId(model: string): string {
  return model === AUTO_MODEL_ALIAS ? AUTO_MODEL_ID : model;
}

/** One `ModelDetails` as `ModelInfo`; the display name is the first non-empty of EPH's candidates (§6). */
export function toModelInfo(details: ModelDetails): ModelInfo {
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
  };
}

/** The model list with an `auto` entry guaranteed (added when the server lists no `default` model). */
export function toModelList(models: readonly ModelDetails[]): ModelInfo[] {
  const list = models.filter((m) => m.modelId !== "").map(toModelInfo);
  if (!list.some((m) => m.id === AUTO_MODEL_ID || m.id === AUTO_MODEL_ALIAS)) {
    list.unshift({ id: AUTO_MODEL_ALIAS, displayName: "Auto", aliases: [], reasoning: false, maxMode: false });
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
  ttlMs: number;
  now: () => number;
}): ModelCatalog {
  let cached: { models: ModelInfo[]; at: number } | undefined;
  let inFlight: Promise<ModelInfo[]> | undefined;
  return {
    list(signal) {
      if (cached !== undefined && options.now() - cached.at < options.ttlMs) return Promise.resolve(cached.models);
      inFlight ??= options
        .fetch(signal)
        .then((details) => {
          const models = toModelList(details);
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
