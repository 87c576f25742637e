import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../../backend/types.js";
import { pageAnthropicModels, toAnthropicModelList } from "./models.js";

const model = (id: string): ModelInfo => ({
  id,
  displayName: id,
  aliases: [],
  reasoning: false,
  maxMode: false,
  vision: false,
});

describe("toAnthropicModelList", () => {
  it("lists every model with its context window, and first and last ids", () => {
    const big = { ...model("b"), contextWindow: 1_000_000 };
    expect(toAnthropicModelList([model("a"), big], "2026-01-01T00:00:00.000Z")).toEqual({
      data: [
        {
          type: "model",
          id: "a",
          display_name: "a",
          created_at: "2026-01-01T00:00:00.000Z",
          max_input_tokens: 200_000,
        },
        {
          type: "model",
          id: "b",
          display_name: "b",
          created_at: "2026-01-01T00:00:00.000Z",
          max_input_tokens: 1_000_000,
        },
      ],
      has_more: false,
      first_id: "a",
      last_id: "b",
    });
    expect(toAnthropicModelList([], "x")).toMatchObject({ first_id: null, last_id: null });
  });
});

describe("pageAnthropicModels", () => {
  it("a cursor id not listed is named in the 400 clamped, however long", () => {
    const id = "m".repeat(100_000);
    expect(() => pageAnthropicModels([], { after_id: id })).toThrow(/no model with id 'mmm/);
    try {
      pageAnthropicModels([], { after_id: id });
    } catch (error) {
      expect((error as Error).message.length).toBeLessThan(400);
    }
  });
});
