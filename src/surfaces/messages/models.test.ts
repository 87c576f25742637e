import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../../backend/types.js";
import { toAnthropicModelList } from "./models.js";

const model = (id: string): ModelInfo => ({
  id,
  displayName: id,
  aliases: [],
  reasoning: false,
  maxMode: false,
  vision: false,
});

describe("toAnthropicModelList", () => {
  it("lists every model with first and last ids", () => {
    expect(toAnthropicModelList([model("a"), model("b")], "2026-01-01T00:00:00.000Z")).toEqual({
      data: [
        { type: "model", id: "a", display_name: "a", created_at: "2026-01-01T00:00:00.000Z" },
        { type: "model", id: "b", display_name: "b", created_at: "2026-01-01T00:00:00.000Z" },
      ],
      has_more: false,
      first_id: "a",
      last_id: "b",
    });
    expect(toAnthropicModelList([], "x")).toMatchObject({ first_id: null, last_id: null });
  });
});
