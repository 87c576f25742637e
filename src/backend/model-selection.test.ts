import { describe, expect, it } from "vitest";
import { clampEffort, effortSibling, selectByVariantId, selectModel } from "./model-selection.js";
import type { EffortTier, ModelInfo } from "./types.js";

const base = (
  id: string,
  parameters: NonNullable<ModelInfo["parameters"]>,
  params: Record<string, string>,
): ModelInfo => ({
  id,
  displayName: id,
  aliases: [],
  reasoning: false,
  maxMode: false,
  vision: true,
  parameters,
  defaults: { params, variant: undefined },
});

const MODELS: ModelInfo[] = [
  base(
    "gpt-5.5",
    [
      { id: "reasoning", values: ["none", "low", "medium", "high", "extra-high"] },
      { id: "fast", values: ["false", "true"] },
    ],
    { reasoning: "medium", fast: "false" },
  ),
  base("composer-2.5", [{ id: "fast", values: ["false", "true"] }], { fast: "true" }),
  base(
    "claude-opus-4-8",
    [
      { id: "thinking", values: ["false", "true"] },
      { id: "context", values: ["300k", "1m"] },
      { id: "effort", values: ["low", "medium", "high", "xhigh", "max"] },
    ],
    { thinking: "true", context: "300k", effort: "high" },
  ),
  {
    id: "claude-opus-4-8-thinking-low",
    displayName: "Opus Thinking Low",
    aliases: [],
    reasoning: true,
    maxMode: false,
    vision: true,
    variant: { base: "claude-opus-4-8", params: { thinking: "true", context: "300k", effort: "low" }, maxMode: false },
  },
  { id: "composer-1", displayName: "Composer 1", aliases: [], reasoning: false, maxMode: false, vision: true },
];
const find = (id: string) => MODELS.find((m) => m.id === id) as ModelInfo;

describe("effortSibling", () => {
  const flat = (id: string): ModelInfo => ({
    id,
    displayName: id,
    aliases: [],
    reasoning: true,
    maxMode: false,
    vision: true,
  });
  const listed = ["gpt-5.3-codex", "gpt-5.3-codex-high", "gpt-5.3-codex-fast", "gpt-5.3-codex-xhigh-fast", "gpt-5.2"]
    .map(flat)
    .concat(MODELS);
  const sibling = (id: string, effort?: EffortTier) =>
    effortSibling(listed, listed.find((m) => m.id === id) as ModelInfo, effort === undefined ? {} : { effort })?.id;

  it("runs a flat id's listed tier sibling, keeping -fast last", () => {
    expect(sibling("gpt-5.3-codex", "high")).toBe("gpt-5.3-codex-high");
    expect(sibling("gpt-5.3-codex-fast", "xhigh")).toBe("gpt-5.3-codex-xhigh-fast");
  });

  it("leaves the id when no sibling is listed, it names a tier already, it has parameters, or no tier was chosen", () => {
    expect(sibling("gpt-5.3-codex", "low")).toBeUndefined();
    expect(sibling("gpt-5.2", "high")).toBeUndefined();
    expect(sibling("gpt-5.3-codex-high", "xhigh")).toBeUndefined();
    expect(sibling("gpt-5.3-codex")).toBeUndefined();
    expect(sibling("gpt-5.5", "high")).toBeUndefined();
    expect(sibling("claude-opus-4-8-thinking-low", "high")).toBeUndefined();
  });
});

describe("clampEffort", () => {
  it("takes the model's own spelling and the nearest tier, a tie going up", () => {
    expect(clampEffort(["none", "low", "medium", "high", "extra-high"], "xhigh")).toBe("extra-high");
    expect(clampEffort(["none", "low", "medium", "high", "extra-high"], "max")).toBe("extra-high");
    expect(clampEffort(["low", "high", "max"], "medium")).toBe("high");
    expect(clampEffort(["low", "medium", "high"], "minimal")).toBe("low");
    expect(clampEffort(["false", "true"], "high")).toBeUndefined();
  });
});

describe("selectModel", () => {
  it("a base model: defaults, the effort on the model's parameter, fast=false unless asked", () => {
    expect(selectModel(MODELS, find("gpt-5.5"), { effort: "xhigh" })).toEqual({
      modelId: "gpt-5.5",
      parameters: [
        { id: "reasoning", value: "extra-high" },
        { id: "fast", value: "false" },
      ],
      maxMode: false,
      ranAs: "gpt-5.5-xhigh",
    });
    expect(selectModel(MODELS, find("composer-2.5")).parameters).toEqual([{ id: "fast", value: "false" }]);
    expect(selectModel(MODELS, find("composer-2.5"), { fast: true }).ranAs).toBe("composer-2.5-fast");
  });

  it("thinking and a 1m context (max mode) where the model has them; a context it lacks is a 400", () => {
    const chosen = selectModel(MODELS, find("claude-opus-4-8"), { thinking: false, effort: "low", context: "1m" });
    expect(chosen.parameters).toEqual([
      { id: "thinking", value: "false" },
      { id: "context", value: "1m" },
      { id: "effort", value: "low" },
    ]);
    expect(chosen.maxMode).toBe(true);
    expect(() => selectModel(MODELS, find("gpt-5.5"), { context: "1m" })).toThrow(/context=1m/);
    // A flat id takes no parameters: the asked-for window is refused, not silently run at the model's own.
    expect(() => selectModel(MODELS, find("composer-1"), { context: "1m" })).toThrow(/composer-1.*context=1m/);
    expect(selectModel(MODELS, find("composer-1"), { effort: "high" })).toMatchObject({ modelId: "composer-1" });
    // A context asked for only where offered (Anthropic's 1M beta): taken where the model has it, left out elsewhere.
    expect(selectModel(MODELS, find("claude-opus-4-8"), { contextIfOffered: "1m" })).toMatchObject({ maxMode: true });
    expect(selectModel(MODELS, find("gpt-5.5"), { contextIfOffered: "1m" }).parameters).toEqual([
      { id: "reasoning", value: "medium" },
      { id: "fast", value: "false" },
    ]);
    expect(selectModel(MODELS, find("composer-1"), { contextIfOffered: "1m" })).toMatchObject({
      modelId: "composer-1",
    });
  });

  it("a listed variant keeps its own values and names itself; a flat id goes alone", () => {
    const variant = selectModel(MODELS, find("claude-opus-4-8-thinking-low"), { effort: "max" });
    expect(variant).toMatchObject({ modelId: "claude-opus-4-8", ranAs: "claude-opus-4-8-thinking-low" });
    expect(variant.parameters).toContainEqual({ id: "effort", value: "low" });
    expect(selectModel(MODELS, find("composer-1"), { effort: "high" })).toEqual({
      modelId: "composer-1",
      parameters: [],
      maxMode: false,
      ranAs: "composer-1",
    });
  });
});

describe("selectByVariantId", () => {
  it("parses a suffix on a base model, the model's spelling of the tier included", () => {
    const parsed = selectByVariantId(MODELS, "gpt-5.5-xhigh-fast");
    expect(parsed?.selection.parameters).toEqual([
      { id: "reasoning", value: "extra-high" },
      { id: "fast", value: "true" },
    ]);
    expect(selectByVariantId(MODELS, "claude-opus-4-8-high-1m")?.selection).toMatchObject({
      maxMode: true,
      ranAs: "claude-opus-4-8-high-1m",
    });
  });

  it("refuses a tier the model lacks, naming its values; an id of other words is unknown", () => {
    expect(() => selectByVariantId(MODELS, "gpt-5.5-max")).toThrow(
      "allowed values: none, low, medium, high, extra-high",
    );
    expect(() => selectByVariantId(MODELS, "composer-2.5-thinking")).toThrow(/thinking=true/);
    expect(selectByVariantId(MODELS, "gpt-5.5-turbo")).toBeUndefined();
  });
});
