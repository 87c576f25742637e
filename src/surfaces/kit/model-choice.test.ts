import { describe, expect, it } from "vitest";
import { choiceFromAnthropic, choiceFromEffort, effortFromBudget, MODEL_CHOICE_TABLE } from "./model-choice.js";

describe("the model-choice mapping table", () => {
  it("OpenAI efforts are tiers; unknown values choose nothing", () => {
    expect(choiceFromEffort("xhigh")).toEqual({ effort: "xhigh" });
    expect(choiceFromEffort("minimal")).toEqual({ effort: "minimal" });
    expect(choiceFromEffort(null)).toEqual({});
  });

  it("thinking budgets: ≤ 4096 low, ≤ 16384 medium, above that high", () => {
    expect([4096, 4097, 16_384, 16_385].map(effortFromBudget)).toEqual(["low", "medium", "medium", "high"]);
  });

  it("Anthropic thinking and output_config.effort (the effort wins over the budget)", () => {
    expect(choiceFromAnthropic({ type: "enabled", budget_tokens: 20_000 }, undefined)).toEqual({
      thinking: true,
      effort: "high",
    });
    expect(choiceFromAnthropic({ type: "enabled", budget_tokens: 20_000 }, "low")).toEqual({
      thinking: true,
      effort: "low",
    });
    expect(choiceFromAnthropic({ type: "disabled" }, undefined)).toEqual({ thinking: false });
    expect(choiceFromAnthropic(undefined, "max")).toEqual({ effort: "max" });
  });

  it("names every door's controls", () => {
    expect(new Set(MODEL_CHOICE_TABLE.map((row) => row.door))).toEqual(
      new Set(["chat", "responses", "messages", "acp", "any"]),
    );
  });
});
