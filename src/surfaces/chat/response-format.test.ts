import { describe, expect, it } from "vitest";
import { outputConstraints } from "./response-format.js";
import { toTurnInput } from "./translate.js";

const base = { model: "m", messages: [{ role: "user" as const, content: "x" }] };

describe("response_format and stop", () => {
  it("approximates json_object with an instruction and says so", () => {
    const { instruction, warnings } = outputConstraints({ type: "json_object" });
    expect(instruction).toMatch(/single valid JSON object/);
    expect(warnings).toEqual([expect.stringContaining("json_object is approximated")]);
  });

  it("puts the schema into the instruction for json_schema", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const { instruction, warnings } = outputConstraints({
      type: "json_schema",
      json_schema: { name: "reply", description: "the reply", schema },
    });
    expect(instruction).toContain('named "reply" (the reply)');
    expect(instruction).toContain(JSON.stringify(schema));
    expect(warnings[0]).toContain("not validated against the schema");
  });

  it("adds nothing for text", () => {
    expect(outputConstraints({ type: "text" })).toEqual({ instruction: undefined, warnings: [] });
    expect(outputConstraints(undefined)).toEqual({ instruction: undefined, warnings: [] });
  });

  it("carries the instruction as an engine instruction (not a message), and stop as the kit's stop sequences", () => {
    const input = toTurnInput({ ...base, response_format: { type: "json_object" }, stop: "END" });
    expect(input.request.instructions).toEqual([expect.stringContaining("JSON object")]);
    expect(input.request.messages).toHaveLength(1);
    expect(input.warnings).toEqual([expect.stringContaining("json_object is approximated")]);
    expect(input.stopSequences).toEqual(["END"]);
    expect(toTurnInput(base).request.instructions).toEqual([]);
  });
});
