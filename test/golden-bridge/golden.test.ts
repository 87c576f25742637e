import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR, finalArguments, runScenario, SCENARIOS } from "./scenarios.js";

const update = process.env.UPDATE_GOLDEN === "1";

describe("bridge golden SSE (test/fixtures/*.events.jsonl → *.sse; UPDATE_GOLDEN=1 regenerates)", () => {
  it.each(SCENARIOS)("$name", async (scenario) => {
    const { sse, released } = await runScenario(scenario);
    const file = `${FIXTURES_DIR}${scenario.name}.sse`;
    if (update || !existsSync(file)) {
      if (!update) throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1`);
      writeFileSync(file, sse);
    }
    expect(sse).toBe(readFileSync(file, "utf8"));
    // Every scenario must release the backend: normal end, error, or the client stopping early.
    expect(released).toBe(true);
  });

  it("client-abort stops before the end: no finish chunk and no [DONE]", async () => {
    const { sse } = await runScenario({ name: "client-abort", options: {}, abortAfterFrames: 3 });
    expect(sse.split("\n\n").filter(Boolean)).toHaveLength(3);
    expect(sse).not.toContain('finish_reason":"stop');
    expect(sse).not.toContain("[DONE]");
  });

  it("backend error mid-stream ends with the error frame instead of [DONE]", async () => {
    const { sse } = await runScenario({ name: "backend-error-mid-stream", options: {} });
    const frames = sse.split("\n\n").filter(Boolean);
    expect(JSON.parse(frames.at(-1)!.slice("data: ".length))).toEqual({
      error: {
        message: "The Cursor stream closed unexpectedly.",
        type: "server_error",
        param: null,
        code: "upstream_unavailable",
      },
    });
    expect(sse).not.toContain("never sent");
  });

  it("streams a 2 KB argument object in at least 20 deltas that add up to the final arguments byte for byte", async () => {
    const { sse } = await runScenario({ name: "tool-call-streamed-2k", options: {} });
    const pieces = sse
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .flatMap((frame) => {
        const chunk = JSON.parse(frame.slice("data: ".length)) as {
          choices: { delta: { tool_calls?: { function: { arguments: string } }[] } }[];
        };
        return chunk.choices[0]?.delta.tool_calls?.map((call) => call.function.arguments) ?? [];
      });
    const final = finalArguments("tool-call-streamed-2k");
    expect(Buffer.byteLength(final)).toBeGreaterThan(2048);
    expect(pieces.filter((piece) => piece !== "").length).toBeGreaterThanOrEqual(20);
    expect(pieces.join("")).toBe(final);
  });
});
