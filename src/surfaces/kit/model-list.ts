/**
 * Cursor model metadata → OpenAI `/v1/models` objects. Cursor's ModelDetails carries no context window or
 * modality facts (docs/protocol.md §6: "clients hard-code them"), so those come from a small family table here.
 */
import type { ModelInfo } from "../../backend/types.js";
import { contextWindowFor } from "../../util/context-window.js";

/** One entry of `GET /v1/models`, OpenAI's shape plus documented extra fields. */
export interface OpenAIModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** Human-readable name from Cursor. */
  display_name: string;
  /** Other ids that select this model (e.g. `auto` for `default`). */
  aliases: string[];
  /** Context window in tokens (from the family table; Cursor does not report it). */
  context_window: number;
  /** True when Cursor marks the model as a thinking model (`thinking_details` present). */
  reasoning: boolean;
  /** Client tools (function calling) are supported; true for every Cursor agent model. */
  tool_calls: boolean;
  /** Image input (Cursor's AvailableModels answer, else the family table; `--vision-models` overrides). */
  vision: boolean;
  /** Cursor "max mode" model. */
  max_mode: boolean;
  /**
   * The parameterised catalogue (docs/protocol.md §6.1), on base models and their variant ids only: what a base
   * takes, or which base and values a variant id stands for.
   */
  cursor_bridge?: BaseModelExtension | VariantModelExtension;
}

/** `cursor_bridge` on a base model. */
export interface BaseModelExtension {
  base: string;
  parameters: { id: string; values: string[] }[];
  context_window: number | null;
  default_variant: string | null;
}

/** `cursor_bridge` on a variant id. */
export interface VariantModelExtension {
  base: string;
  params: Record<string, string>;
  max_mode: boolean;
}

/** The extension object of a model entry; undefined for a model without parameters. */
export function modelExtension(info: ModelInfo): BaseModelExtension | VariantModelExtension | undefined {
  if (info.parameters !== undefined) {
    return {
      base: info.id,
      parameters: info.parameters.map((p) => ({ id: p.id, values: [...p.values] })),
      context_window: info.contextWindow ?? null,
      default_variant: info.defaults?.variant ?? null,
    };
  }
  if (info.variant !== undefined) {
    return { base: info.variant.base, params: { ...info.variant.params }, max_mode: info.variant.maxMode };
  }
  return undefined;
}

export { contextWindowFor };

/** Builds the OpenAI model object; `ownedBy` says which upstream serves it (e.g. `cursor` or `cursor-emulator`). */
export function toOpenAIModel(info: ModelInfo, ownedBy: string, created: number): OpenAIModel {
  const extension = modelExtension(info);
  return {
    id: info.id,
    object: "model",
    created,
    owned_by: ownedBy,
    display_name: info.displayName,
    aliases: info.aliases,
    context_window: info.contextWindow ?? contextWindowFor(info.id),
    reasoning: info.reasoning,
    tool_calls: true,
    vision: info.vision,
    max_mode: info.maxMode,
    ...(extension === undefined ? {} : { cursor_bridge: extension }),
  };
}

/** The `/v1/models` list: every model, plus alias entries (e.g. `auto`) pointing at the same metadata. */
export function toOpenAIModelList(models: readonly ModelInfo[], ownedBy: string, created: number): OpenAIModel[] {
  const list = models.map((m) => toOpenAIModel(m, ownedBy, created));
  const ids = new Set(list.map((m) => m.id));
  for (const model of models) {
    for (const alias of model.id === "default" ? ["auto", ...model.aliases] : model.aliases) {
      if (ids.has(alias)) continue;
      ids.add(alias);
      list.push({ ...toOpenAIModel(model, ownedBy, created), id: alias, aliases: [model.id] });
    }
  }
  return list;
}
