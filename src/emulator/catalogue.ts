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
  // A switch (thinking, fast, or any boolean of a --catalogue model) adds its name when on.
  if (id === "thinking" || id === "fast" || value === "true" || value === "false") return value === "true" ? id : "";
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
    kind: isBoolean(values) ? ("boolean" as const) : ("enum" as const),
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

/** A parameter whose values are exactly `"false"` and `"true"` is a boolean one. */
function isBoolean(values: readonly string[]): boolean {
  return values === BOOL || (values.length === 2 && values.includes("true") && values.includes("false"));
}

const MODELS: readonly CatalogueModel[] = SPECS.map(toModel);

/** What a `--catalogue` file adds: flat model ids (as `--models` does) and parameterised base models. */
export interface CatalogueFile {
  ids: string[];
  bases: CatalogueModel[];
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const VALUE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Reads an `emulator --catalogue FILE`: JSON `{"models": [...]}` whose entries are a model id (a flat model, as a
 * `--models` line) or a base model `{"id", "displayName"?, "vendor"?, "parameters": [{"id", "values": [...]}],
 * "defaults"?: {id: value}}`. Its variants are every combination of the values, named and given flat ids as the
 * built-in ones (`<id>-<tokens>`); a default left out is the parameter's first value. Errors name the entry.
 */
export function parseCatalogueFile(text: string): CatalogueFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const models = (json as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) throw new Error('expected {"models": [...]}');
  const out: CatalogueFile = { ids: [], bases: [] };
  for (const [index, entry] of models.entries()) {
    const where = `models[${index}]`;
    if (typeof entry === "string") {
      if (!ID.test(entry)) throw new Error(`${where}: "${entry}" is not a model id (letters, digits, ".", "_", "-")`);
      out.ids.push(entry);
      continue;
    }
    if (typeof entry !== "object" || entry === null) throw new Error(`${where}: expected a model id or an object`);
    const { id, displayName, vendor, parameters, defaults } = entry as Record<string, unknown>;
    if (typeof id !== "string" || !ID.test(id)) throw new Error(`${where}: "id" must be a model id`);
    if (!Array.isArray(parameters) || parameters.length === 0) {
      throw new Error(`${where} (${id}): "parameters" must list at least one {"id", "values"}`);
    }
    const params: [string, string[]][] = [];
    for (const parameter of parameters as unknown[]) {
      const { id: pid, values } = (parameter ?? {}) as Record<string, unknown>;
      if (typeof pid !== "string" || !/^[a-z][a-z0-9_]{0,31}$/.test(pid)) {
        throw new Error(`${where} (${id}): a parameter "id" must be a lower-case name`);
      }
      if (
        !Array.isArray(values) ||
        values.length === 0 ||
        !values.every((v) => typeof v === "string" && VALUE.test(v))
      ) {
        throw new Error(
          `${where} (${id}): parameter ${pid} needs "values", a list of strings ("true"/"false" for a switch)`,
        );
      }
      if (params.some(([other]) => other === pid))
        throw new Error(`${where} (${id}): parameter ${pid} is listed twice`);
      params.push([pid, [...new Set(values as string[])]]);
    }
    const combos = params.reduce((n, [, values]) => n * values.length, 1);
    if (combos > 512) throw new Error(`${where} (${id}): ${combos} variants; at most 512`);
    const chosen: Record<string, string> = {};
    for (const [pid, values] of params) {
      const wanted = (defaults as Record<string, unknown> | undefined)?.[pid];
      if (wanted !== undefined && (typeof wanted !== "string" || !values.includes(wanted))) {
        throw new Error(`${where} (${id}): default ${pid} must be one of ${values.join(", ")}`);
      }
      chosen[pid] = typeof wanted === "string" ? wanted : (values[0] as string);
    }
    out.bases.push(
      toModel({
        id,
        name: typeof displayName === "string" && displayName !== "" ? displayName : id,
        vendor: typeof vendor === "string" && vendor !== "" ? vendor : "Custom",
        params: params.map(([pid, values]) => [pid, isBoolean(values) ? BOOL : values] as const),
        defaults: chosen,
      }),
    );
  }
  return out;
}

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
