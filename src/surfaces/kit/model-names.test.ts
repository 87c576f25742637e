import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../../backend/types.js";
import {
  claudeVersion,
  createModelNames,
  parseFamilyOverrides,
  parseModelAliases,
  resolveAnthropicModel,
} from "./model-names.js";

const model = (id: string, reasoning = false, maxMode = false): ModelInfo => ({
  id,
  displayName: id,
  aliases: id === "claude-4.5-sonnet" ? ["sonnet-4.5"] : [],
  reasoning,
  maxMode,
  vision: false,
});

const CURSOR = [
  model("default"),
  model("composer-1"),
  model("composer-2"),
  model("claude-4.5-sonnet"),
  model("claude-4.5-sonnet-thinking", true),
  model("claude-4-sonnet"),
  model("claude-4.1-opus"),
  model("claude-4.6-opus", false, true),
  model("claude-4.5-opus-high"),
  model("claude-4.5-opus-high-thinking", true),
];

describe("resolveAnthropicModel", () => {
  it.each([
    ["claude-4.5-sonnet", false, "claude-4.5-sonnet"],
    ["SONNET-4.5", false, "SONNET-4.5"],
    ["auto", false, "auto"],
    ["claude-sonnet-5-5", false, "claude-4.5-sonnet"],
    ["claude-sonnet-5-5", true, "claude-4.5-sonnet-thinking"],
    ["claude-sonnet-4-5-20250929", false, "claude-4.5-sonnet"],
    ["claude-opus-5-5[1m]", false, "claude-4.5-opus-high"],
    ["claude-opus-5-5", true, "claude-4.5-opus-high-thinking"],
    ["claude-3-5-haiku-latest", false, "composer-2"],
    ["claude-haiku-5-5", false, "composer-2"],
    ["gpt-4o", false, "gpt-4o"],
    ["claude-unknown", false, "claude-unknown"],
  ])("%s (thinking %s) → %s", (requested, reasoning, expected) => {
    expect(resolveAnthropicModel(requested, CURSOR, reasoning)).toBe(expected);
  });

  it("uses the configured model for a family (--anthropic-models) and ignores malformed entries", () => {
    const overrides = parseFamilyOverrides(["sonnet=composer-1", "opus=", "tiny=x", "haiku"]);
    expect(overrides).toEqual({ sonnet: "composer-1" });
    expect(resolveAnthropicModel("claude-sonnet-4-5", CURSOR, false, overrides)).toBe("composer-1");
    expect(resolveAnthropicModel("claude-opus-5-5", CURSOR, false, overrides)).toBe("claude-4.5-opus-high");
    expect(resolveAnthropicModel("claude-4.5-sonnet", CURSOR, false, overrides)).toBe("claude-4.5-sonnet");
  });

  it("takes a parameterised base model, never one of its variant ids (the request's effort then applies)", () => {
    const variant = (id: string, thinking: boolean): ModelInfo => ({
      ...model(id, thinking),
      variant: { base: "claude-opus-4-8", params: { thinking: String(thinking), effort: "low" }, maxMode: false },
    });
    const listed = [
      ...CURSOR,
      variant("claude-opus-4-8-thinking-low", true),
      variant("claude-opus-4-8-low", false),
      { ...model("claude-opus-4-8", true), parameters: [{ id: "effort", values: ["low", "high"] }] },
    ];
    expect(resolveAnthropicModel("claude-opus-5-5", listed, true)).toBe("claude-opus-4-8");
    expect(resolveAnthropicModel("claude-opus-5-5", listed, false)).toBe("claude-opus-4-8");
    expect(resolveAnthropicModel("claude-opus-4-8-20260101", listed, false)).toBe("claude-opus-4-8");
    expect(resolveAnthropicModel("claude-opus-4-8-latest[1m]", listed, false)).toBe("claude-opus-4-8");
    // A minor version after a listed base is another Claude version (not listed: the family's newest), not a variant.
    const base5 = { ...model("claude-opus-5", true), parameters: [{ id: "effort", values: ["low", "high"] }] };
    expect(resolveAnthropicModel("claude-opus-5-5", [...listed, base5], false)).toBe("claude-opus-5");
    expect(resolveAnthropicModel("claude-opus-5-5-20270101", [...listed, base5], false)).toBe("claude-opus-5");
    // A variant suffix (listed or not, or mistyped) is the engine's to read, never the base's defaults.
    expect(resolveAnthropicModel("claude-opus-4-8-thinking-xhigh-1m", listed, false)).toBe(
      "claude-opus-4-8-thinking-xhigh-1m",
    );
    expect(resolveAnthropicModel("claude-opus-4-8-thinking-bogus", listed, false)).toBe(
      "claude-opus-4-8-thinking-bogus",
    );
  });

  it("takes a max-mode model when Cursor lists the family only in max mode", () => {
    const maxOnly = [model("default"), model("claude-4.5-sonnet", false, true), model("claude-4.6-sonnet", true, true)];
    expect(resolveAnthropicModel("claude-sonnet-5-5", maxOnly, true)).toBe("claude-4.6-sonnet");
    expect(resolveAnthropicModel("claude-sonnet-5-5", [...maxOnly, model("claude-4-sonnet")], true)).toBe(
      "claude-4-sonnet",
    );
  });

  it("takes the family's model of the version the id names when Cursor lists one, however either spells it", () => {
    const listed = [...CURSOR, model("claude-sonnet-5"), model("claude-opus-4-8"), model("claude-haiku-4-5")];
    // Without the version, each of these would be the family's newest (claude-sonnet-5, claude-opus-4-8).
    expect(resolveAnthropicModel("claude-sonnet-4-5-20250929", listed, false)).toBe("claude-4.5-sonnet");
    expect(resolveAnthropicModel("claude-sonnet-4-5", listed, true)).toBe("claude-4.5-sonnet-thinking");
    expect(resolveAnthropicModel("claude-3-5-sonnet-latest", [...listed, model("claude-3.5-sonnet")], false)).toBe(
      "claude-3.5-sonnet",
    );
    expect(resolveAnthropicModel("claude-sonnet-4", listed, false)).toBe("claude-4-sonnet");
    expect(resolveAnthropicModel("claude-opus-4-1-20250805", listed, false)).toBe("claude-4.1-opus");
    expect(resolveAnthropicModel("claude-opus-4-5[1m]", listed, true)).toBe("claude-4.5-opus-high-thinking");
    expect(resolveAnthropicModel("claude-haiku-4-5-20251001", listed, false)).toBe("claude-haiku-4-5");
    // A max-mode model of that version is still that version.
    expect(resolveAnthropicModel("claude-opus-4-6", listed, false)).toBe("claude-4.6-opus");
    // A version Cursor does not list: the newest of the family.
    expect(resolveAnthropicModel("claude-sonnet-4-7", listed, false)).toBe("claude-sonnet-5");
    expect(resolveAnthropicModel("claude-opus-4-7", listed, false)).toBe("claude-opus-4-8");
  });

  it("reads the version out of either spelling", () => {
    expect(claudeVersion("claude-sonnet-4-5-20250929", "sonnet")).toBe("4.5");
    expect(claudeVersion("claude-4.5-sonnet-thinking", "sonnet")).toBe("4.5");
    expect(claudeVersion("claude-3-5-haiku-latest", "haiku")).toBe("3.5");
    expect(claudeVersion("claude-opus-4-8-thinking-high-1m", "opus")).toBe("4.8");
    expect(claudeVersion("claude-opus-4-6[1m]", "opus")).toBe("4.6");
    expect(claudeVersion("claude-sonnet-5", "sonnet")).toBe("5");
    expect(claudeVersion("claude-4-sonnet", "sonnet")).toBe("4");
    expect(claudeVersion("claude-opus-latest", "opus")).toBe("");
  });

  it("falls back from opus to the newest sonnet, and leaves a family Cursor lacks to the engine's 404", () => {
    const sonnets = [model("claude-4-sonnet"), model("claude-4.5-sonnet")];
    expect(resolveAnthropicModel("claude-opus-5-5", sonnets, false)).toBe("claude-4.5-sonnet");
    expect(resolveAnthropicModel("claude-sonnet-5-5", [model("gpt-5.2")], false)).toBe("claude-sonnet-5-5");
  });
});

describe("createModelNames", () => {
  it("resolves user aliases first (case-insensitively), then Anthropic families, and passes the rest", async () => {
    let listed = 0;
    const list = async () => {
      listed += 1;
      return CURSOR;
    };
    const names = createModelNames({
      aliases: ["gpt-4o=claude-4.5-sonnet", "Sonnet=composer-1", "claude-sonnet-4-5=composer-2"],
      anthropicModels: ["opus=claude-4.1-opus"],
    });
    expect(names.aliases).toEqual([
      { name: "gpt-4o", target: "claude-4.5-sonnet" },
      { name: "Sonnet", target: "composer-1" },
      { name: "claude-sonnet-4-5", target: "composer-2" },
    ]);
    expect(await names.resolve("GPT-4o", false, list)).toBe("claude-4.5-sonnet");
    expect(await names.resolve("sonnet", false, list)).toBe("composer-1");
    expect(await names.resolve("claude-sonnet-4-5", false, list)).toBe("composer-2");
    expect(listed).toBe(0);
    expect(await names.resolve("claude-opus-4-1", false, list)).toBe("claude-4.1-opus");
    expect(await names.resolve("claude-haiku-4-5", false, list)).toBe("composer-2");
    expect(await names.resolve("gpt-5.2", false, list)).toBe("gpt-5.2");
    expect(listed).toBe(2);
  });

  it("parses NAME=ID entries, keeping the last of a repeated name and skipping malformed ones", () => {
    expect([...parseModelAliases(["a=b", "=x", "y=", "c", "a=d", "m=provider/model:v1"])]).toEqual([
      ["a", "d"],
      ["m", "provider/model:v1"],
    ]);
  });
});
