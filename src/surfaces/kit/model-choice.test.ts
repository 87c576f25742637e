import { describe, expect, it } from "vitest";
import {
  choiceFromAnthropic,
  choiceFromEffort,
  effortFromBudget,
  MODEL_CHOICE_TABLE,
  wantsLongContext,
} from "./model-choice.js";

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

  it("an anthropic-beta context-1m entry asks for the 1m context; other betas do not", () => {
    const beta = "claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14";
    expect(choiceFromAnthropic({ type: "adaptive" }, "high", beta)).toEqual({
      contextIfOffered: "1m",
      thinking: true,
      effort: "high",
    });
    expect(choiceFromAnthropic(undefined, undefined, " Context-1M-2026-01-01 ")).toEqual({ contextIfOffered: "1m" });
    expect(choiceFromAnthropic(undefined, undefined, "claude-code-20250219,interleaved-thinking-2025-05-14")).toEqual(
      {},
    );
    expect(wantsLongContext(undefined)).toBe(false);
  });

  it("names every door's controls", () => {
    expect(new Set(MODEL_CHOICE_TABLE.map((row) => row.door))).toEqual(
      new Set(["chat", "responses", "messages", "acp", "any"]),
    );
  });
});
