import { describe, expect, it } from "vitest";
import { partialJson, StreamedCalls } from "./streamed-calls.js";

describe("partialJson", () => {
  it("closes open strings, arrays and objects, and cuts an unfinished key or literal", () => {
    expect(partialJson('{"path":"src/a')).toEqual({ path: "src/a" });
    expect(partialJson('{"a":[1,{"b":"x\\"y')).toEqual({ a: [1, { b: 'x"y' }] });
    expect(partialJson('{"a":1,"lon')).toEqual({ a: 1 });
    expect(partialJson('{"a":tr')).toEqual({});
    expect(partialJson('{"a":"x\\')).toEqual({ a: "x" });
    expect(partialJson('{"a":"x\\u00')).toEqual({ a: "x" });
    expect(partialJson('{"a":{"b":2}}')).toEqual({ a: { b: 2 } });
    expect(partialJson("")).toBeUndefined();
  });
});

describe("StreamedCalls", () => {
  it("shows a call once, updates it while its value grows, and stops once the executor takes it", () => {
    const calls = new StreamedCalls();
    expect(calls.show("c1", "web__echo", '{"te')).toMatchObject({ sessionUpdate: "tool_call", rawInput: {} });
    expect(calls.show("c1", "web__echo", '{"text"')).toBeUndefined();
    expect(calls.show("c1", "web__echo", '{"text":"h')).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      rawInput: { text: "h" },
    });
    expect(calls.take("c1")).toBe(true);
    expect(calls.show("c1", "web__echo", '{"text":"hi"}')).toBeUndefined();
    expect(calls.take("c2")).toBe(false);
  });
});
