import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { normalizeToolArguments } from "./tool-arguments.js";

const PARAM = "messages[1].tool_calls[0].function.arguments";

describe("normalizeToolArguments", () => {
  it("turns empty arguments into {} and keeps a JSON object as sent", () => {
    expect(normalizeToolArguments("", PARAM)).toBe("{}");
    expect(normalizeToolArguments("  \n", PARAM)).toBe("{}");
    expect(normalizeToolArguments('{ "b": 1, "a": [2] }', PARAM)).toBe('{ "b": 1, "a": [2] }');
  });

  it.each([
    ["text that is no JSON", "{not json", "not valid JSON"],
    ["a JSON array", "[1,2]", "must be a JSON object"],
    ["a JSON string", '"x"', "must be a JSON object"],
    ["null", "null", "must be a JSON object"],
  ])("refuses %s with a 400 naming the field", (_name, text, message) => {
    let thrown: unknown;
    try {
      normalizeToolArguments(text, PARAM);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProxyError);
    const error = thrown as ProxyError;
    expect(error.status).toBe(400);
    expect(error.param).toBe(PARAM);
    expect(error.message).toContain(`'${PARAM}'`);
    expect(error.message).toContain(message);
  });
});
