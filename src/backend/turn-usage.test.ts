import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TurnEndedUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import { segmentUsage, turnEndedUsage } from "./turn-usage.js";

describe("usage of a segment (docs/protocol.md §4.6)", () => {
  it("takes Cursor's turn_ended counts: prompt = input (cache reads and writes are part of it), reasoning inside output", () => {
    const counts = turnEndedUsage(
      create(TurnEndedUpdateSchema, {
        inputTokens: 46n,
        outputTokens: 12n,
        cacheReadTokens: 40n,
        cacheWriteTokens: 3n,
        reasoningTokens: 7n,
      }),
    );
    expect(segmentUsage({ turnUsage: counts, outputTokens: 99, usedTokens: 5000 })).toEqual({
      inputTokens: 46,
      outputTokens: 12,
      totalTokens: 58,
      cacheReadTokens: 40,
      cacheWriteTokens: 3,
      reasoningTokens: 7,
      source: "cursor",
    });
    // A server whose input leaves the cache out would otherwise report less prompt than it cached.
    const low = turnEndedUsage(
      create(TurnEndedUpdateSchema, { inputTokens: 1n, cacheReadTokens: 40n, cacheWriteTokens: 3n }),
    );
    expect(segmentUsage({ turnUsage: low, outputTokens: 0, usedTokens: undefined }).inputTokens).toBe(43);
  });

  it("an empty turn_ended (older servers) and a segment that ends on tool calls fall back to the estimate", () => {
    expect(turnEndedUsage(create(TurnEndedUpdateSchema, {}))).toBeUndefined();
    expect(segmentUsage({ turnUsage: undefined, outputTokens: 10, usedTokens: 250 })).toEqual({
      inputTokens: 240,
      outputTokens: 10,
      totalTokens: 250,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      source: "estimate",
    });
    // Before any checkpoint the context size is unknown: prompt 0, the output counted.
    expect(segmentUsage({ turnUsage: undefined, outputTokens: 4, usedTokens: undefined })).toMatchObject({
      inputTokens: 0,
      outputTokens: 4,
      totalTokens: 4,
    });
  });

  it("missing counts are 0 and negative ones are not trusted", () => {
    const counts = turnEndedUsage(create(TurnEndedUpdateSchema, { outputTokens: 5n, reasoningTokens: -2n }));
    expect(counts).toEqual({ input: 0, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 0 });
  });
});
