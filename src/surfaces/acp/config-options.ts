/**
 * The session's configuration options (ACP `configOptions`, `session/set_config_option`, `config_option_update`):
 * one table of option definitions. Mode and model are options like any other; an option added later (effort,
 * context, fast from Cursor's catalogue) is one more entry in {@link CONFIG_OPTIONS}, its value kept in the
 * session record's `config` (persisted with the session). When the model changes, every option marked
 * `dependsOnModel` is rebuilt for the new model and a value the new model does not offer is dropped (the option's
 * default applies again).
 */
import { RequestError, type SessionConfigOption, type SessionModeState } from "@agentclientprotocol/sdk";
import type { ModelChoice, ModelInfo } from "../../backend/types.js";
import { modelTooLong } from "../kit/json-body.js";
import { effortTier } from "../kit/model-choice.js";
import { toRequestError } from "./errors.js";
import type { AcpModeId, AcpSessionRecord } from "./session-store.js";
import type { SessionModelState } from "./wire.js";

/** What option builders may read besides the session. */
export interface ConfigContext {
  /** Cursor's model list (the engine's catalogue). */
  models: ModelInfo[];
}

/** A value `session/set_config_option` sets: a select's value id or a boolean. */
export type ConfigValue = string | boolean;

/** One configuration option. */
export interface ConfigOptionDefinition {
  id: string;
  /** The option as the editor sees it for this session, or undefined when it does not apply (to this model). */
  build(record: AcpSessionRecord, context: ConfigContext): SessionConfigOption | undefined;
  /** Sets the value on the record; throws an invalid-params error for a value the option does not offer. */
  apply(record: AcpSessionRecord, value: ConfigValue, context: ConfigContext): void;
  /** Rebuilt when the model changes (a value the new model lacks is dropped). */
  dependsOnModel?: boolean;
}

/** Cursor's agent modes as ACP modes. */
export const MODES: SessionModeState["availableModes"] = [
  { id: "agent", name: "Agent", description: "Cursor's agent: reads, edits and runs commands" },
  { id: "plan", name: "Plan", description: "Plans the change before making it" },
  { id: "ask", name: "Ask", description: "Answers questions without changing anything" },
];

export function isMode(id: string): id is AcpModeId {
  return MODES.some((mode) => mode.id === id);
}

/** The model id (or alias) `value` names in the list, or undefined. */
export function findModel(models: ModelInfo[], value: string): ModelInfo | undefined {
  return models.find((m) => m.id === value || m.aliases.includes(value));
}

function invalid(message: string): RequestError {
  return RequestError.invalidParams(undefined, message);
}

/**
 * A select option whose value lives in `record.config[id]`: `values` lists what the current session offers (empty or
 * undefined: the option is not shown), `fallback` is the value when none was chosen. Most added options are one call.
 */
export function selectOption(spec: {
  id: string;
  name: string;
  description?: string;
  category: string;
  dependsOnModel?: boolean;
  values(record: AcpSessionRecord, context: ConfigContext): Array<{ value: string; name: string }> | undefined;
  fallback(record: AcpSessionRecord, context: ConfigContext): string;
}): ConfigOptionDefinition {
  return {
    id: spec.id,
    ...(spec.dependsOnModel === true ? { dependsOnModel: true } : {}),
    build(record, context) {
      const values = spec.values(record, context);
      if (values === undefined || values.length === 0) return undefined;
      const chosen = record.config[spec.id];
      return {
        id: spec.id,
        name: spec.name,
        ...(spec.description === undefined ? {} : { description: spec.description }),
        category: spec.category,
        type: "select",
        currentValue: typeof chosen === "string" ? chosen : spec.fallback(record, context),
        options: values,
      };
    },
    apply(record, value, context) {
      const values = spec.values(record, context) ?? [];
      if (typeof value !== "string" || !values.some((v) => v.value === value)) {
        throw invalid(`${spec.name} has no value ${String(value)}.`);
      }
      record.config[spec.id] = value;
    },
  };
}

const modeOption: ConfigOptionDefinition = {
  id: "mode",
  build: (record) => ({
    id: "mode",
    name: "Mode",
    category: "mode",
    type: "select",
    currentValue: record.mode,
    options: MODES.map((m) => ({
      value: m.id,
      name: m.name,
      ...(m.description ? { description: m.description } : {}),
    })),
  }),
  apply(record, value) {
    if (typeof value !== "string" || !isMode(value)) throw invalid(`Unknown mode ${String(value)}.`);
    record.mode = value;
  },
};

const modelOption: ConfigOptionDefinition = {
  id: "model",
  build: (record, { models }) => ({
    id: "model",
    name: "Model",
    category: "model",
    type: "select",
    currentValue: record.model,
    options: models.map((m) => ({ value: m.id, name: m.displayName })),
  }),
  apply(record, value, { models }) {
    const tooLong = modelTooLong(value);
    if (tooLong !== undefined) throw toRequestError(tooLong);
    const model = typeof value === "string" ? findModel(models, value) : undefined;
    if (model === undefined) throw invalid(`Cursor has no model ${String(value)}.`);
    // An alias (`sonnet-4.5`, `auto`) is kept as the id it names, so the option's current value is one it offers.
    record.model = model.id;
  },
};

/**
 * The model option in ACP's older shape (`models`, for editors that switch with session/set_model): the same
 * models and current value as the `model` option.
 */
export function modelStateOf(record: AcpSessionRecord, { models }: ConfigContext): SessionModelState {
  return {
    currentModelId: record.model,
    availableModels: models.map((m) => ({ modelId: m.id, name: m.displayName })),
  };
}

/** The session's model as a parameterised base model (docs/protocol.md §6.1), or undefined. */
function baseModel(record: AcpSessionRecord, { models }: ConfigContext): ModelInfo | undefined {
  const model = findModel(models, record.model);
  return model?.parameters === undefined ? undefined : model;
}

/** A select over one of the base model's parameters, in its wire values; not shown for other models. */
function parameterOption(spec: {
  id: string;
  name: string;
  category: string;
  /** The model's parameter ids this option sets (the first it has). */
  parameters: readonly string[];
  label(value: string): string;
}): ConfigOptionDefinition {
  const parameterOf = (record: AcpSessionRecord, context: ConfigContext) => {
    const model = baseModel(record, context);
    const parameter = model?.parameters?.find((p) => spec.parameters.includes(p.id));
    return parameter === undefined || model === undefined ? undefined : { model, parameter };
  };
  return selectOption({
    id: spec.id,
    name: spec.name,
    category: spec.category,
    dependsOnModel: true,
    values: (record, context) =>
      parameterOf(record, context)?.parameter.values.map((value) => ({ value, name: spec.label(value) })),
    fallback: (record, context) => {
      const found = parameterOf(record, context);
      if (found === undefined) return "";
      // Fast defaults to off: the bridge sends fast=false unless asked (Cursor's own default is fast on some models).
      if (spec.id === "fast") return "false";
      return found.model.defaults?.params[found.parameter.id] ?? found.parameter.values[0] ?? "";
    },
  });
}

const capitalised = (value: string) =>
  value
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");

/** Effort (`effort` or `reasoning`), context window and fast, from Cursor's catalogue for the current model. */
const effortOption = parameterOption({
  id: "effort",
  name: "Effort",
  category: "thought_level",
  parameters: ["effort", "reasoning"],
  label: capitalised,
});
const contextOption = parameterOption({
  id: "context",
  name: "Context",
  category: "model",
  parameters: ["context"],
  label: (value) => value.toUpperCase(),
});
const fastOption = parameterOption({
  id: "fast",
  name: "Fast",
  category: "model",
  parameters: ["fast"],
  label: (value) => (value === "true" ? "On" : "Off"),
});

/** Every option, in the order the editor shows them. Add an option here. */
export const CONFIG_OPTIONS: ConfigOptionDefinition[] = [
  modeOption,
  modelOption,
  effortOption,
  contextOption,
  fastOption,
];

/**
 * The engine's model choice for the session's chosen values (the kit's one vocabulary): the effort tier (the
 * catalogue spells the top one `extra-high` on some models), the context tier, fast.
 */
export function choiceOf(record: AcpSessionRecord): ModelChoice {
  const choice: ModelChoice = {};
  const effort = record.config.effort;
  const tier = typeof effort === "string" ? effortTier(effort) : undefined;
  if (tier !== undefined) choice.effort = tier;
  if (typeof record.config.context === "string") choice.context = record.config.context;
  if (record.config.fast === "true" || record.config.fast === true) choice.fast = true;
  return choice;
}

/** The options of a session as the editor sees them. */
export function buildConfigOptions(
  record: AcpSessionRecord,
  context: ConfigContext,
  definitions: ConfigOptionDefinition[] = CONFIG_OPTIONS,
): SessionConfigOption[] {
  return definitions.flatMap((definition) => definition.build(record, context) ?? []);
}

/**
 * Sets one option (an invalid-params error for an unknown option or value). A model change rebuilds the options
 * that depend on it, dropping values the new model does not offer.
 */
export function applyConfigOption(
  record: AcpSessionRecord,
  id: string,
  value: ConfigValue,
  context: ConfigContext,
  definitions: ConfigOptionDefinition[] = CONFIG_OPTIONS,
): void {
  const definition = definitions.find((d) => d.id === id);
  if (definition === undefined) throw invalid(`Unknown configuration option ${id}.`);
  const before = record.model;
  definition.apply(record, value, context);
  if (record.model === before) return;
  for (const dependent of definitions.filter((d) => d.dependsOnModel === true)) {
    const chosen = record.config[dependent.id];
    if (chosen === undefined) continue;
    const rebuilt = dependent.build(record, context);
    const offered =
      rebuilt === undefined
        ? false
        : rebuilt.type === "boolean"
          ? typeof chosen === "boolean"
          : (rebuilt.options as Array<{ value?: string; options?: Array<{ value: string }> }>).some(
              (o) => o.value === chosen || (o.options ?? []).some((inner) => inner.value === chosen),
            );
    if (!offered) delete record.config[dependent.id];
  }
}

/** Tokens of a context tier as the catalogue spells it (`272k`, `1m`), or undefined. */
function tierTokens(tier: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([km])$/i.exec(tier.trim());
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * (match[2]?.toLowerCase() === "m" ? 1_000_000 : 1_000));
}

/**
 * The session's context window from Cursor's catalogue: the chosen Context tier's (the window of the model's
 * variants with that tier), else the model's own; undefined when the catalogue does not say.
 */
export function contextSizeOf(record: AcpSessionRecord, { models }: ConfigContext): number | undefined {
  const model = findModel(models, record.model);
  if (model === undefined) return undefined;
  const tier = record.config.context;
  if (typeof tier === "string" && model.parameters !== undefined) {
    const sizes = models
      .filter((m) => m.variant?.base === model.id && m.variant.params.context === tier)
      .map((m) => m.contextWindow)
      .filter((size): size is number => typeof size === "number");
    if (sizes.length > 0) return Math.max(...sizes);
    const tokens = tierTokens(tier);
    if (tokens !== undefined) return tokens;
  }
  return model.contextWindow ?? undefined;
}
