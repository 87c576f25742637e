/**
 * The emulator's parameterised model catalogue (docs/protocol.md §6.1, cursor-protocol-addendum-3.md P1–P3, P19–P20):
 * base models with parameter definitions (`thinking`, `effort`, `reasoning`, `context`, `fast`) and named variants,
 * each variant with its flat id (what `GetUsableModels` lists). The same data answers `AvailableModels` with
 * `use_model_parameters`, the flat ids of `GetUsableModels`, and the checks a Run's `requested_model` must pass.
 * Pure data and functions: no protobuf, no I/O (models.ts renders it).
 */

/** One parameter a base model takes; every value is a string on the wire (`"true"`/`"false"` for booleans). */
export interface CatalogueParameter {
  id: string;
  name: string;
  kind: "boolean" | "enum";
  values: readonly string[];
}

/** One named combination of parameter values. */
export interface CatalogueVariant {
  /** The flat id `GetUsableModels` lists for it (`legacy_slug` where it differs from `variantString`). */
  id: string;
  /** `variant_string_representation`: `<base>-<tokens>`. */
  variantString: string;
  params: Readonly<Record<string, string>>;
  displayName: string;
  /** The variant runs in Max mode (a `1m` context). */
  maxMode: boolean;
  defaultNonMax: boolean;
  defaultMax: boolean;
}

/** One base model. */
export interface CatalogueModel {
  id: string;
  displayName: string;
  vendor: string;
  /** Context window of the default (non-max) variant, in tokens. */
  contextWindow: number;
  images: boolean;
  parameters: readonly CatalogueParameter[];
  /** The default non-max variant's values. */
  defaults: Readonly<Record<string, string>>;
  variants: readonly CatalogueVariant[];
}

const BOOL = ["false", "true"] as const;
const PARAMETER_NAMES: Record<string, string> = {
  thinking: "Thinking",
  effort: "Effort",
  reasoning: "Reasoning",
  context: "Context",
  fast: "Fast",
};

/** Tokens per context tier, in tokens. */
const CONTEXT_TOKENS: Record<string, number> = {
  "200k": 200_000,
  "256k": 256_000,
  "272k": 272_000,
  "300k": 300_000,
  "1m": 1_000_000,
};

interface Spec {
  id: string;
  name: string;
  vendor: string;
  /** Parameter id → values (booleans are `BOOL`); the order is the wire order (P2). */
  params: ReadonlyArray<readonly [string, readonly string[]]>;
  defaults: Record<string, string>;
  /** Flat ids start with this instead of the base id (P6: `cursor-grok-4.6-high` for base `grok-4.6`). */
  legacyPrefix?: string;
}

/**
 * The base models (P2, P20): a claude with thinking/context/effort, gpts with reasoning/fast/context, a composer with
 * fast only (whose omitted `fast` means fast, P3), a gemini with effort, a grok whose flat ids carry another prefix.
 */
const SPECS: readonly Spec[] = [
  {
    id: "claude-opus-4-8",
    name: "Claude Opus 4.8",
    vendor: "Anthropic",
    params: [
      ["thinking", BOOL],
      ["context", ["300k", "1m"]],
      ["effort", ["low", "medium", "high", "xhigh", "max"]],
    ],
    defaults: { thinking: "true", context: "300k", effort: "high" },
  },
  {
    id: "claude-sonnet-5",
    name: "Claude Sonnet 5",
    vendor: "Anthropic",
    params: [
      ["thinking", BOOL],
      ["context", ["300k", "1m"]],
      ["effort", ["low", "medium", "high", "xhigh", "max"]],
    ],
    defaults: { thinking: "true", context: "300k", effort: "medium" },
  },
  {
    id: "claude-haiku-4-5",
    name: "Claude Haiku 4.5",
    vendor: "Anthropic",
    params: [["thinking", BOOL]],
    defaults: { thinking: "false" },
  },
  {
    id: "gpt-5.6-sol",
    name: "GPT-5.6 Sol",
    vendor: "OpenAI",
    params: [
      ["context", ["272k", "1m"]],
      ["reasoning", ["none", "low", "medium", "high", "xhigh", "max"]],
      ["fast", BOOL],
    ],
    defaults: { context: "272k", reasoning: "medium", fast: "false" },
  },
  {
    id: "gpt-5.5",
    name: "GPT-5.5",
    vendor: "OpenAI",
    // The top tier's wire value is `extra-high` on this model (P2).
    params: [
      ["reasoning", ["none", "low", "medium", "high", "extra-high"]],
      ["fast", BOOL],
    ],
    defaults: { reasoning: "medium", fast: "false" },
  },
  {
    id: "composer-2.5",
    name: "Composer 2.5",
    vendor: "Cursor",
    params: [["fast", BOOL]],
    defaults: { fast: "true" },
  },
  {
    id: "gemini-3.7-flash",
    name: "Gemini 3.7 Flash",
    vendor: "Google",
    params: [["effort", ["low", "medium", "high"]]],
    defaults: { effort: "high" },
  },
  {
    id: "grok-4.6",
    name: "Grok 4.6",
    vendor: "xAI",
    params: [
      ["effort", ["low", "medium", "high", "xhigh"]],
      ["fast", BOOL],
    ],
    defaults: { effort: "high", fast: "false" },
    legacyPrefix: "cursor-grok-4.6",
  },
  {
    id: "kimi-k3",
    name: "Kimi K3",
    vendor: "Moonshot",
    params: [["reasoning", ["low", "high", "max"]]],
    defaults: { reasoning: "high" },
  },
];

/** Default context windows by base id prefix (the models without a `context` parameter). */
function baseContext(spec: Spec): number {
  const context = spec.defaults.context;
  if (context !== undefined) return CONTEXT_TOKENS[context] ?? 200_000;
  if (spec.id.startsWith("gemini-")) return 1_000_000;
  if (spec.id.startsWith("gpt-")) return 272_000;
  if (spec.id.startsWith("grok-") || spec.id.startsWith("kimi-")) return 256_000;
  return 200_000;
}

/** The suffix token of one parameter value (empty = the value adds nothing to the flat id). */
function tokenOf(id: string, value: string, defaults: Record<string, string>): string {
  if (id === "thinking" || id === "fast") return value === "true" ? id : "";
  if (id === "context") return value === defaults.context ? "" : value;
  return value === "extra-high" ? "xhigh" : value;
}

function labelOf(id: string, value: string): string {
  if (id === "thinking") return value === "true" ? "Thinking" : "";
  if (id === "fast") return value === "true" ? "Fast" : "";
  if (id === "context") return value.toUpperCase();
  return value
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");
}

/** Every combination of the parameters' values, in definition order. */
function combinations(params: Spec["params"]): Record<string, string>[] {
  let out: Record<string, string>[] = [{}];
  for (const [id, values] of params) {
    out = out.flatMap((combo) => values.map((value) => ({ ...combo, [id]: value })));
  }
  return out;
}

/** Wire order of the suffix tokens: thinking, then the effort tier, then context, then fast. */
const TOKEN_ORDER = ["thinking", "effort", "reasoning", "context", "fast"];

function toModel(spec: Spec): CatalogueModel {
  const parameters = spec.params.map(([id, values]) => ({
    id,
    name: PARAMETER_NAMES[id] ?? id,
    kind: values === BOOL ? ("boolean" as const) : ("enum" as const),
    values: [...values],
  }));
  const defaultMax = spec.defaults.context === undefined ? undefined : { ...spec.defaults, context: "1m" };
  const variants = combinations(spec.params).map((params): CatalogueVariant => {
    const ordered = Object.keys(params).sort((a, b) => TOKEN_ORDER.indexOf(a) - TOKEN_ORDER.indexOf(b));
    const tokens = ordered.map((id) => tokenOf(id, params[id] ?? "", spec.defaults)).filter((t) => t !== "");
    const labels = ordered.map((id) => labelOf(id, params[id] ?? "")).filter((l) => l !== "");
    const suffix = tokens.map((token) => `-${token}`).join("");
    const same = (other: Record<string, string> | undefined) =>
      other !== undefined && Object.entries(params).every(([id, value]) => other[id] === value);
    return {
      id: `${spec.legacyPrefix ?? spec.id}${suffix}`,
      variantString: `${spec.id}${suffix}`,
      params,
      displayName: [spec.name, ...labels].join(" "),
      maxMode: params.context === "1m",
      defaultNonMax: same(spec.defaults),
      defaultMax: same(defaultMax),
    };
  });
  return {
    id: spec.id,
    displayName: spec.name,
    vendor: spec.vendor,
    contextWindow: baseContext(spec),
    images: true,
    parameters,
    defaults: { ...spec.defaults },
    variants,
  };
}

const MODELS: readonly CatalogueModel[] = SPECS.map(toModel);

/** The parameterised catalogue: every base model with its parameters and variants. */
export function parameterisedCatalogue(): readonly CatalogueModel[] {
  return MODELS;
}

/** The context window a variant's values give, in tokens. */
export function contextWindowOf(model: CatalogueModel, params: Readonly<Record<string, string>>): number {
  const context = params.context;
  return context === undefined ? model.contextWindow : (CONTEXT_TOKENS[context] ?? model.contextWindow);
}

/** What a Run's `requested_model` selects, once checked. */
export interface CatalogueSelection {
  model: CatalogueModel;
  /** Every parameter's value: the sent ones, the default variant's for the rest. */
  params: Record<string, string>;
}

/**
 * Checks base-model parameters the way the server does (P8: a value the model lacks is `invalid_argument`);
 * returns the problem, or the full selection with defaults filled in.
 */
export function selectParameters(
  model: CatalogueModel,
  sent: ReadonlyArray<{ id: string; value: string }>,
  base: Readonly<Record<string, string>> = model.defaults,
): CatalogueSelection | string {
  const params: Record<string, string> = { ...base };
  for (const { id, value } of sent) {
    const definition = model.parameters.find((p) => p.id === id);
    if (definition === undefined) {
      const known = model.parameters.map((p) => p.id).join(", ") || "none";
      return `Model "${model.id}" has no parameter "${id}" (its parameters: ${known}).`;
    }
    if (!definition.values.includes(value)) {
      return `Model "${model.id}" does not accept ${id}="${value}" (allowed: ${definition.values.join(", ")}).`;
    }
    params[id] = value;
  }
  return { model, params };
}
