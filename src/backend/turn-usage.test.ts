import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TurnEndedUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import { nothingReported, segmentUsage, turnEndedUsage } from "./turn-usage.js";

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

  it("the segment that ends a turn reports Cursor's counts minus what the Run's earlier segments reported", () => {
    const reported = nothingReported();
    // Segment 1 ends on tool calls before any checkpoint: the request's estimate is its input.
    const first = segmentUsage({ turnUsage: undefined, outputTokens: 30, usedTokens: undefined }, reported, () => 100);
    expect(first).toMatchObject({ inputTokens: 100, outputTokens: 30, totalTokens: 130, source: "estimate" });
    const second = segmentUsage({ turnUsage: undefined, outputTokens: 20, usedTokens: undefined }, reported, () => 150);
    expect(reported).toEqual({ input: 250, output: 50, cacheRead: 0, cacheWrite: 0, reasoning: 0 });
    const turn = { input: 1000, output: 80, cacheRead: 600, cacheWrite: 40, reasoning: 10 };
    const last = segmentUsage({ turnUsage: turn, outputTokens: 30, usedTokens: 5000 }, reported, () => 200);
    expect(last).toEqual({
      inputTokens: 750,
      outputTokens: 30,
      totalTokens: 780,
      cacheReadTokens: 600,
      cacheWriteTokens: 40,
      reasoningTokens: 10,
      source: "cursor",
    });
    const sum = (key: "inputTokens" | "outputTokens" | "totalTokens") => first[key] + second[key] + last[key];
    expect([sum("inputTokens"), sum("outputTokens"), sum("totalTokens")]).toEqual([1000, 80, 1080]);
  });

  it("a difference is never below 0; the cache parts fit in the input (reads first), the reasoning in the output", () => {
    const reported = { input: 900, output: 70, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
    const turn = { input: 1000, output: 60, cacheRead: 60, cacheWrite: 50, reasoning: 10 };
    expect(segmentUsage({ turnUsage: turn, outputTokens: 0, usedTokens: undefined }, reported)).toEqual({
      inputTokens: 100,
      outputTokens: 0,
      totalTokens: 100,
      cacheReadTokens: 60,
      cacheWriteTokens: 40,
      reasoningTokens: 0,
      source: "cursor",
    });
    expect(reported).toEqual({ input: 1000, output: 70, cacheRead: 60, cacheWrite: 40, reasoning: 0 });
  });
});
