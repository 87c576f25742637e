/**
 * The emulator's model list (docs/protocol.md §6): ids in Cursor's naming pattern
 * `<family>-<version>[-<effort>][-thinking]`, `default` standing for Auto, `thinking_details` on reasoning models.
 * Context windows are not part of ModelDetails on the wire; the emulator uses them for `token_details.max_tokens`.
 */
import { create, type DescMessage, type MessageInitShape, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, type WireType } from "@bufbuild/protobuf/wire";
import {
  type GetUsableModelsResponse,
  GetUsableModelsResponseSchema,
  type ModelDetails,
  ModelDetailsSchema,
  type RequestedModel,
} from "../gen/agent/v1/models_pb.js";
import {
  type AvailableModelSchema,
  type AvailableModelsResponse,
  AvailableModelsResponseSchema,
} from "../gen/aiserver/v1/ai_service_pb.js";
import {
  type CatalogueModel,
  type CatalogueVariant,
  contextWindowOf,
  parameterisedCatalogue,
  selectParameters,
} from "./catalogue.js";
import { DEFAULT_AVAILABLE_MODELS_BASE64, DEFAULT_USABLE_MODELS_BASE64 } from "./default-available-models.js";

interface ModelEntry {
  id: string;
  name: string;
  short: string;
  thinking: boolean;
  /** Offered in Max mode too (ModelDetails.max_mode). */
  maxMode: boolean;
  /** Accepts image input (AvailableModels.supports_images, §4.11 of the reference). */
  images: boolean;
  contextWindow: number;
  aliases: string[];
}

type Spec = [id: string, name: string, short: string, flags: string, contextWindow: number, aliases?: string[]];

/**
 * Today's catalogue: the ids of cursor-protocol-addendum-2.md §10 and cursor-protocol.md §6 (EPH, CARL/SUDO and FIN
 * lists, 2026) plus the ids earlier releases listed; `emulator --models FILE` adds more. Flags: `t` thinking,
 * `m` max mode, `i` image input.
 */
const SPECS: readonly Spec[] = [
  ["default", "Auto", "Auto", "i", 200_000, ["auto"]],
  ["composer-1", "Composer 1", "Composer", "i", 200_000],
  ["composer-1.5", "Composer 1.5", "Composer 1.5", "ti", 200_000],
  ["composer-2", "Composer 2", "Composer 2", "ti", 200_000],
  ["composer-2-fast", "Composer 2 Fast", "Composer 2 Fast", "ti", 200_000],
  ["claude-4.5-sonnet", "Claude 4.5 Sonnet", "Sonnet 4.5", "mi", 200_000, ["sonnet-4.5"]],
  [
    "claude-4.5-sonnet-thinking",
    "Claude 4.5 Sonnet Thinking",
    "Sonnet 4.5 Thinking",
    "tmi",
    200_000,
    ["sonnet-4.5-thinking"],
  ],
  ["claude-4.5-opus-high", "Claude 4.5 Opus", "Opus 4.5", "mi", 200_000],
  ["claude-4.5-opus-high-thinking", "Claude 4.5 Opus Thinking", "Opus 4.5 Thinking", "tmi", 200_000],
  ["claude-4.6-sonnet-medium", "Claude 4.6 Sonnet", "Sonnet 4.6", "tmi", 200_000, ["sonnet-4.6"]],
  ["claude-4.6-opus-high", "Claude 4.6 Opus", "Opus 4.6", "tmi", 200_000, ["opus-4.6"]],
  ["claude-4.6-opus-high-thinking", "Claude 4.6 Opus Thinking", "Opus 4.6 Thinking", "tmi", 200_000],
  ["claude-4-sonnet", "Claude 4 Sonnet", "Sonnet 4", "i", 200_000],
  ["claude-3.5-sonnet", "Claude 3.5 Sonnet", "Sonnet 3.5", "i", 200_000],
  ["gpt-4o", "GPT-4o", "GPT-4o", "i", 128_000],
  ["cursor-small", "Cursor Small", "Cursor Small", "", 128_000],
  ["gpt-5.1-high", "GPT-5.1 High", "GPT-5.1 High", "tmi", 272_000],
  ["gpt-5.1-codex-max", "GPT-5.1 Codex Max", "Codex Max", "tmi", 272_000],
  ["gpt-5.1-codex-max-high", "GPT-5.1 Codex Max High", "Codex Max High", "tmi", 272_000],
  ["gpt-5.2", "GPT-5.2", "GPT-5.2", "tmi", 272_000],
  ["gpt-5.2-high", "GPT-5.2 High", "GPT-5.2 High", "tmi", 272_000],
  ...codexVariants("gpt-5.2-codex", "GPT-5.2 Codex", "Codex 5.2"),
  ...codexVariants("gpt-5.3-codex", "GPT-5.3 Codex", "Codex 5.3"),
  ["gpt-5.3-codex-spark-preview", "GPT-5.3 Codex Spark (Preview)", "Codex Spark", "t", 128_000],
  ["gpt-5.4-medium", "GPT-5.4", "GPT-5.4", "tmi", 272_000],
  ["gemini-2.5-pro", "Gemini 2.5 Pro", "Gemini 2.5 Pro", "ti", 1_000_000],
  ["gemini-3-pro", "Gemini 3 Pro", "Gemini 3 Pro", "tmi", 1_000_000],
  ["gemini-3-flash", "Gemini 3 Flash", "Gemini 3 Flash", "ti", 1_000_000],
  ["gemini-3.1-pro", "Gemini 3.1 Pro", "Gemini 3.1 Pro", "tmi", 1_000_000],
  ["grok-code-fast-1", "Grok Code Fast 1", "Grok Code", "", 256_000],
];

/** `<base>[-low|-high|-xhigh][-fast]` (cursor-protocol.md §6): eight ids per codex family. */
function codexVariants(base: string, name: string, short: string): Spec[] {
  const out: Spec[] = [];
  for (const [effort, label] of [
    ["", ""],
    ["-low", " Low"],
    ["-high", " High"],
    ["-xhigh", " Extra High"],
  ]) {
    for (const [fast, fastLabel] of [
      ["", ""],
      ["-fast", " Fast"],
    ]) {
      out.push([
        `${base}${effort}${fast}`,
        `${name}${label}${fastLabel}`,
        `${short}${label}${fastLabel}`,
        "tmi",
        272_000,
      ]);
    }
  }
  return out;
}

const toEntry = ([id, name, short, flags, contextWindow, aliases = []]: Spec): ModelEntry => ({
  id,
  name,
  short,
  thinking: flags.includes("t"),
  maxMode: flags.includes("m"),
  images: flags.includes("i"),
  contextWindow,
  aliases,
});

/** The model `auto` / `default` is routed to (its display name is sent as `routed_model`, addendum 2 §4). */
export const AUTO_ROUTES_TO = "composer-1.5";

function toDetails(entry: ModelEntry): ModelDetails {
  return create(ModelDetailsSchema, {
    modelId: entry.id,
    displayModelId: entry.id,
    displayName: entry.name,
    displayNameShort: entry.short,
    aliases: entry.aliases,
    ...(entry.thinking ? { thinkingDetails: {} } : {}),
    ...(entry.maxMode ? { maxMode: true } : {}),
  });
}

/** A model the emulator serves. */
export interface EmulatedModel {
  id: string;
  displayName: string;
  contextWindow: number;
  images: boolean;
  /** The parameterised base model this id belongs to (a base id or one of its flat variant ids). */
  base?: CatalogueModel;
  /** A flat variant id's parameter values. */
  params?: Readonly<Record<string, string>>;
}

/** What a Run's model fields select, or why the server refuses them. */
export type ModelSelection =
  | { ok: true; model: EmulatedModel }
  | { ok: false; kind: "bad_model_name" | "not_found" | "invalid_argument"; message: string };

/**
 * One model of REST `GET /v1/models` (cursor-protocol-addendum-3.md P16): `{items: ModelListItem[]}`, what Cursor's
 * SDK reads and validates a model id against (`id` or `aliases`) before a local run.
 */
export interface ModelListItem {
  id: string;
  displayName: string;
  description?: string;
  aliases?: string[];
  parameters?: { id: string; displayName?: string; values: { value: string; displayName?: string }[] }[];
  variants?: {
    params: { id: string; value: string }[];
    displayName: string;
    description?: string;
    isDefault?: boolean;
  }[];
}

/** The emulator's model list: the built-in catalogue plus ids added with `emulator --models FILE`. */
export interface ModelCatalogue {
  /** Every usable model, Auto first. */
  usable(): ModelDetails[];
  /** `GetUsableModels`' answer: {@link usable} as its message. */
  usableResponse(): GetUsableModelsResponse;
  /**
   * `GetUsableModels`' answer (`usable()`) for a binary request: while the catalogue is the built-in one, its bytes
   * encoded at build time as unknown fields, like {@link availableBinary}'s, so a start neither builds nor encodes
   * its hundred messages; else the message itself. Only for binary encoding (its JSON is empty).
   */
  usableBinary(): GetUsableModelsResponse;
  /**
   * `AiService/AvailableModels`: the legacy IDE list (the one that says which models accept images), or with
   * `use_model_parameters` the parameterised catalogue: base ids with parameter definitions and variants (P18–P19).
   */
  available(useModelParameters?: boolean): AvailableModelsResponse;
  /**
   * `available(true)` for a binary answer: while the catalogue is the built-in one, a message carrying the answer's
   * bytes encoded at build time (tools/emulator-catalogue.ts) as its unknown fields, which encodes to exactly those
   * bytes without walking 486 messages cold; else `available(true)` itself. Only for binary encoding (its JSON is
   * empty).
   */
  availableBinary(): AvailableModelsResponse;
  /**
   * REST `GET /v1/models` items: one per row of `available(true)`, in its order (a flat model alone, a base model
   * with its parameters and variants), so the three model views join one for one.
   */
  listItems(): ModelListItem[];
  /** The CLI's default model: Auto (`default`, §6). */
  defaultModel(): ModelDetails;
  /** The entry for a model id or alias, if the emulator knows it. */
  find(id: string): EmulatedModel | undefined;
  /** The model that serves a request for `model`: Auto's pick for `default`, else the model itself. */
  route(model: EmulatedModel): EmulatedModel;
  /**
   * What a run_request's `model_details` / `requested_model` select, checked as the server checks them
   * (cursor-protocol-addendum-3.md P7–P8): an unknown id is `ERROR_BAD_MODEL_NAME`, a bare base id in
   * `model_details` is `not_found`, a parameter the model lacks or a value it does not offer is `invalid_argument`.
   */
  select(modelDetailsId: string | undefined, requested: RequestedModel | undefined): ModelSelection;
}

/** A flat variant id as GetUsableModels lists it: no parameter metadata (P5). */
function variantDetails(variant: CatalogueVariant): ModelDetails {
  return create(ModelDetailsSchema, {
    modelId: variant.id,
    displayModelId: variant.id,
    displayName: variant.displayName,
    displayNameShort: variant.displayName,
    aliases: [],
    ...(variant.params.thinking === "true" ? { thinkingDetails: {} } : {}),
    ...(variant.maxMode ? { maxMode: true } : {}),
  });
}

type AvailableModelInit = MessageInitShape<typeof AvailableModelSchema>;

/** One base model as `AvailableModels` with `use_model_parameters` describes it (P19). */
function parameterisedRow(model: CatalogueModel): AvailableModelInit {
  const maxVariant = model.variants.find((v) => v.defaultMax);
  return {
    name: model.id,
    defaultOn: true,
    supportsAgent: true,
    supportsThinking: model.parameters.some((p) => p.id === "thinking"),
    supportsImages: model.images,
    supportsMaxMode: maxVariant !== undefined,
    supportsNonMaxMode: true,
    contextTokenLimit: model.contextWindow,
    ...(maxVariant === undefined ? {} : { contextTokenLimitForMaxMode: contextWindowOf(model, maxVariant.params) }),
    clientDisplayName: model.displayName,
    serverModelName: model.id,
    inputboxShortModelName: model.displayName,
    vendorName: model.vendor,
    legacySlugs: model.variants.map((v) => v.id),
    parameterDefinitions: model.parameters.map((p) => ({
      id: p.id,
      name: p.name,
      parameterType: {
        type:
          p.kind === "boolean"
            ? {
                case: "booleanParameter" as const,
                value: {
                  values: p.values.map((v) => ({ value: v === "true", displayName: v === "true" ? "On" : "Off" })),
                },
              }
            : {
                case: "enumParameter" as const,
                value: { values: p.values.map((v) => ({ value: v, displayName: v })) },
              },
      },
    })),
    variants: model.variants.map((v) => ({
      parameterValues: Object.entries(v.params).map(([id, value]) => ({ id, value })),
      displayName: v.displayName,
      isMaxMode: v.maxMode,
      isDefaultMaxConfig: v.defaultMax,
      isDefaultNonMaxConfig: v.defaultNonMax,
      variantStringRepresentation: v.variantString,
      legacySlug: v.id,
    })),
  };
}

/** A base model as REST `/v1/models` lists it (P16): the parameters and variants of its AvailableModels row. */
function listItemOf(model: CatalogueModel): ModelListItem {
  return {
    id: model.id,
    displayName: model.displayName,
    description: `${model.displayName} by ${model.vendor}`,
    parameters: model.parameters.map((p) => ({
      id: p.id,
      displayName: p.name,
      values: p.values.map((value) => ({
        value,
        displayName: p.kind === "boolean" ? (value === "true" ? "On" : "Off") : value,
      })),
    })),
    variants: model.variants.map((v) => ({
      params: Object.entries(v.params).map(([id, value]) => ({ id, value })),
      displayName: v.displayName,
      ...(v.defaultNonMax ? { isDefault: true } : {}),
    })),
  };
}

/**
 * Builds the catalogue. `extraIds` (one per line of a `--models` file) are served as thinking, image-capable models
 * with a 200k context window, named by their id.
 */
export function createModelCatalogue(
  extraIds: readonly string[] = [],
  extraBases: readonly CatalogueModel[] = [],
): ModelCatalogue {
  const models = SPECS.map(toEntry);
  for (const id of extraIds) {
    if (!models.some((m) => m.id === id)) models.push(toEntry([id, id, id, "ti", 200_000]));
  }
  // A `--catalogue` base model replaces a built-in one of the same id.
  const bases = [
    ...parameterisedCatalogue().filter((base) => !extraBases.some((extra) => extra.id === base.id)),
    ...extraBases,
  ].filter((base) => !models.some((m) => m.id === base.id));
  const variants = new Map<string, { base: CatalogueModel; variant: CatalogueVariant }>();
  for (const base of bases) {
    for (const variant of base.variants) {
      if (!models.some((m) => m.id === variant.id)) variants.set(variant.id, { base, variant });
      if (variant.variantString !== variant.id) variants.set(variant.variantString, { base, variant });
    }
  }
  const baseModel = (base: CatalogueModel, params = base.defaults): EmulatedModel => ({
    id: base.id,
    displayName: base.displayName,
    contextWindow: contextWindowOf(base, params),
    images: base.images,
    base,
  });
  const find = (id: string): EmulatedModel | undefined => {
    const entry = models.find((m) => m.id === id || m.aliases.includes(id));
    if (entry !== undefined) {
      return { id: entry.id, displayName: entry.name, contextWindow: entry.contextWindow, images: entry.images };
    }
    const flat = variants.get(id);
    if (flat !== undefined) {
      const { base, variant } = flat;
      return { ...baseModel(base, variant.params), id, displayName: variant.displayName, params: variant.params };
    }
    const base = bases.find((b) => b.id === id);
    return base === undefined ? undefined : baseModel(base);
  };
  const flatIds = [...new Set([...variants.values()].map(({ variant }) => variant.id))];
  const select = (detailsId: string | undefined, requested: RequestedModel | undefined): ModelSelection => {
    const id = detailsId || requested?.modelId || "";
    if (id === "") return { ok: false, kind: "bad_model_name", message: "run_request names no model." };
    const model = find(id);
    if (model === undefined) return { ok: false, kind: "bad_model_name", message: `Model "${id}" is not available.` };
    const sent = requested?.modelId === id ? requested.parameters : [];
    if (detailsId) {
      if (model.base !== undefined && model.params === undefined) {
        return {
          ok: false,
          kind: "not_found",
          message: `Model "${id}" was not found: send a variant id, or the base id with parameters in requested_model only.`,
        };
      }
      if (sent.length > 0) {
        return {
          ok: false,
          kind: "invalid_argument",
          message: "model_details and a parameterised requested_model select conflicting models.",
        };
      }
      return { ok: true, model };
    }
    if (model.base === undefined) {
      if (sent.length === 0) return { ok: true, model };
      return { ok: false, kind: "invalid_argument", message: `Model "${id}" takes no parameters.` };
    }
    const checked = selectParameters(model.base, sent, model.params ?? model.base.defaults);
    if (typeof checked === "string") return { ok: false, kind: "invalid_argument", message: checked };
    return {
      ok: true,
      model: { ...model, contextWindow: contextWindowOf(model.base, checked.params), params: checked.params },
    };
  };
  const available = (useModelParameters = false): AvailableModelsResponse =>
    create(AvailableModelsResponseSchema, {
      ...(useModelParameters ? { useModelParameters: true } : {}),
      modelNames: [...models.map((m) => m.id), ...(useModelParameters ? bases.map((b) => b.id) : flatIds)],
      models: [
        ...models.map((m) => ({
          name: m.id,
          defaultOn: true,
          supportsAgent: true,
          supportsThinking: m.thinking,
          supportsImages: m.images,
          supportsMaxMode: m.maxMode,
          supportsNonMaxMode: true,
          contextTokenLimit: m.contextWindow,
          clientDisplayName: m.name,
          serverModelName: m.id,
        })),
        ...(useModelParameters
          ? bases.map(parameterisedRow)
          : flatIds.map((id) => {
              const { base, variant } = variants.get(id) as { base: CatalogueModel; variant: CatalogueVariant };
              return {
                name: id,
                defaultOn: true,
                supportsAgent: true,
                supportsThinking: variant.params.thinking === "true",
                supportsImages: base.images,
                supportsMaxMode: variant.maxMode,
                supportsNonMaxMode: !variant.maxMode,
                contextTokenLimit: contextWindowOf(base, variant.params),
                clientDisplayName: variant.displayName,
                serverModelName: id,
              };
            })),
      ],
    });
  const usable = (): ModelDetails[] => [
    ...models.map(toDetails),
    ...flatIds.map((id) => {
      return variantDetails((variants.get(id) as { variant: CatalogueVariant }).variant);
    }),
  ];
  const usableResponse = () => create(GetUsableModelsResponseSchema, { models: usable() });
  /** Nothing added to the built-in catalogue: its answers' bytes were encoded at build time. */
  const builtIn = extraIds.length === 0 && extraBases.length === 0;
  return {
    usable,
    usableResponse,
    usableBinary: () =>
      builtIn ? preEncoded(GetUsableModelsResponseSchema, DEFAULT_USABLE_MODELS_BASE64) : usableResponse(),
    available,
    availableBinary: () =>
      builtIn ? preEncoded(AvailableModelsResponseSchema, DEFAULT_AVAILABLE_MODELS_BASE64) : available(true),
    listItems: () => [
      ...models.map(
        (m): ModelListItem => ({
          id: m.id,
          displayName: m.name,
          ...(m.aliases.length > 0 ? { aliases: [...m.aliases] } : {}),
        }),
      ),
      ...bases.map(listItemOf),
    ],
    defaultModel: () => toDetails(models[0] as ModelEntry),
    find,
    route: (model) => (model.id === "default" ? (find(AUTO_ROUTES_TO) ?? model) : model),
    select,
  };
}

/** The built-in catalogue's parameterised AvailableModels answer, encoded now (tools/emulator-catalogue.ts). */
export function freshDefaultAvailableModels(): Uint8Array {
  return toBinary(AvailableModelsResponseSchema, createModelCatalogue().available(true));
}

/** The built-in catalogue's GetUsableModels answer, encoded now (tools/emulator-catalogue.ts). */
export function freshDefaultUsableModels(): Uint8Array {
  return toBinary(GetUsableModelsResponseSchema, createModelCatalogue().usableResponse());
}

/**
 * A `schema` message whose encoding is `base64`'s bytes: each top-level field kept as an unknown field, which
 * protobuf-es writes back verbatim, tag by tag.
 */
function preEncoded<Desc extends DescMessage>(schema: Desc, base64: string): MessageShape<Desc> {
  const bytes = Buffer.from(base64, "base64");
  const reader = new BinaryReader(bytes);
  const unknown: { no: number; wireType: WireType; data: Uint8Array }[] = [];
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    unknown.push({ no, wireType, data: reader.skip(wireType, no) });
  }
  const message = create(schema);
  message.$unknown = unknown;
  return message;
}

/**
 * Reads a `--models` file: one model id per line; blank lines and `#` comments are skipped. An id is what Cursor's
 * ids look like (letters, digits, `.`, `_`, `-`); anything else is reported with its line number.
 */
export function parseModelsFile(text: string): string[] {
  const ids: string[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") continue;
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(line)) {
      throw new Error(`line ${index + 1}: "${line}" is not a model id (letters, digits, ".", "_", "-")`);
    }
    ids.push(line);
  }
  return ids;
}
