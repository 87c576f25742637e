import { describe, expect, it } from "vitest";
import type { ProxyError } from "../../util/errors.js";
import { headerList, headerSafe, MAX_HEADER_LIST_CHARS } from "./header-list.js";
import {
  assertJsonDepth,
  chatToolCallArguments,
  findJsonProblem,
  jsonTextDepth,
  MAX_JSON_DEPTH,
} from "./json-limits.js";

const nested = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

function thrown(run: () => void): ProxyError {
  try {
    run();
  } catch (error) {
    return error as ProxyError;
  }
  throw new Error("expected a throw");
}

describe("JSON depth limits", () => {
  it("finds the first container deeper than the limit, iteratively (no stack overflow at 1,000,000 levels)", () => {
    expect(findJsonProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(findJsonProblem(nested(MAX_JSON_DEPTH + 1))).toEqual({ kind: "too_deep", path: expect.any(Array) });
    expect(findJsonProblem(nested(MAX_JSON_DEPTH + 1))?.path).toHaveLength(MAX_JSON_DEPTH);
    expect(findJsonProblem(nested(1_000_000))?.path).toHaveLength(MAX_JSON_DEPTH);
    expect(findJsonProblem({ a: [1, { b: "x" }], c: null })).toBeUndefined();
  });

  it("finds a number JSON.parse made infinite, by its path (the largest double passes)", () => {
    expect(findJsonProblem(JSON.parse('{"a":[1,{"b":1.7976931348623157e308,"c":-1e308}]}'))).toBeUndefined();
    expect(findJsonProblem(JSON.parse('{"a":[1,{"b":"x","c":-1e400}]}'))).toEqual({
      kind: "out_of_range",
      path: ["a", 1, "c"],
    });
    expect(findJsonProblem(JSON.parse('{"a":[0, 2e308]}'))).toEqual({ kind: "out_of_range", path: ["a", 1] });
    const error = thrown(() => assertJsonDepth(JSON.parse('{"max_tokens":1e400}'), () => []));
    expect(error.detail).toBe("out_of_range");
    expect(error.param).toBe("max_tokens");
  });

  it("counts the depth of JSON text without parsing, ignoring brackets inside strings", () => {
    expect(jsonTextDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonTextDepth('"\\"[["')).toBe(0);
    expect(jsonTextDepth(nestedText(5000))).toBe(5000);
    expect(jsonTextDepth("not json {")).toBe(1);
  });

  it("names the field: a deep tool schema, a deep tool-call arguments string", () => {
    const deepSchema = { type: "object", properties: { a: nested(200) } };
    const schemaError = thrown(() =>
      assertJsonDepth(
        { model: "m", tools: [{ type: "function", function: { name: "t", parameters: deepSchema } }] },
        chatToolCallArguments,
      ),
    );
    expect(schemaError.status).toBe(400);
    expect(schemaError.detail).toBe("nesting_too_deep");
    expect(schemaError.param).toBe("tools[0].function.parameters.properties.a");
    expect(schemaError.message).toContain(`more than ${MAX_JSON_DEPTH} levels`);
    const body = {
      messages: [
        { role: "user", content: "x" },
        {
          role: "assistant",
          tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: nestedText(100) } }],
        },
      ],
    };
    const argsError = thrown(() => assertJsonDepth(body, chatToolCallArguments));
    expect(argsError.param).toBe("messages[1].tool_calls[0].function.arguments");
    expect(argsError.message).toContain("inside this JSON string");
  });
});

describe("header lists", () => {
  it("joins short lists unchanged and cuts long ones at ~1 KB with a count of the rest", () => {
    expect(headerList(["temperature", "top_p"], ",")).toBe("temperature,top_p");
    const keys = Array.from({ length: 3000 }, (_, i) => `unknown_key_${i}`);
    const value = headerList(keys, ",");
    expect(value.length).toBeLessThanOrEqual(MAX_HEADER_LIST_CHARS);
    const shown = value.split(",").slice(0, -1);
    expect(value).toMatch(new RegExp(`,\\.\\.\\. and ${3000 - shown.length} more$`));
    expect(headerList(["x".repeat(5000)], ",").length).toBeLessThanOrEqual(MAX_HEADER_LIST_CHARS);
  });

  it("makes client-supplied names header-safe", () => {
    expect(headerSafe("a\nb\u00e9\u2026")).toBe("a\\u000ab\\u00e9\\u2026");
    expect(() => new Headers({ x: headerList(["bad\r\nname", "ünï"], ",") })).not.toThrow();
  });
});
