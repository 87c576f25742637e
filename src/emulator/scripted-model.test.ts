import { describe, expect, it } from "vitest";
import { composeReply, fillerText, type ModelInput, planTurn, tokenize } from "./scripted-model.js";

const input = (userText: string, extra: Partial<ModelInput> = {}): ModelInput => ({
  userText,
  resume: false,
  history: [],
  declaredTools: [],
  ...extra,
});

describe("planTurn", () => {
  it("echoes without directives", () => {
    expect(planTurn(input("hi there"))).toEqual({
      thinkingTokens: 0,
      calls: [],
      textParts: ["You said: hi there"],
      webCalls: [],
      modeSwitches: [],
    });
  });

  it("plans declared tool calls in order and refuses undeclared ones", () => {
    const plan = planTurn(input('[[emu:tool a {"x":1}]] [[emu:tool b]] [[emu:tool c]]', { declaredTools: ["a", "c"] }));
    expect(plan.calls).toEqual([
      { kind: "mcp", name: "a", args: { x: 1 }, step: 0 },
      { kind: "mcp", name: "c", args: {}, step: 0 },
    ]);
    expect(
      composeReply(plan, [
        { name: "a", text: "1" },
        { name: "c", text: "3" },
      ]),
    ).toBe("Tool b is not available.\na returned: 1\nc returned: 3");
  });

  it("recalls the first user message from the history, not the request", () => {
    const history = [
      { role: "system" as const, text: "sys" },
      { role: "user" as const, text: "first [[emu:think 2]]" },
      { role: "assistant" as const, text: "ok" },
      { role: "user" as const, text: "second" },
    ];
    expect(planTurn(input("[[emu:recall]]", { history })).textParts).toEqual(["First message: first"]);
  });

  it("on resume, answers from tool results after the last user message instead of calling again", () => {
    const history = [
      { role: "user" as const, text: "[[emu:tool w]] [[emu:think 3]]" },
      { role: "assistant" as const, text: "" },
      { role: "tool-result" as const, name: "w", text: "sunny" },
    ];
    const plan = planTurn(input("[[emu:tool w]] [[emu:think 3]]", { resume: true, history, declaredTools: ["w"] }));
    expect(plan.calls).toEqual([]);
    expect(plan.thinkingTokens).toBe(3);
    expect(composeReply(plan, [])).toBe("w returned: sunny");
  });

  it("splits the calls into steps at [[emu:then]]", () => {
    const text = "[[emu:tool a]] [[emu:tool b]] [[emu:then]] [[emu:tool c]] [[emu:then]] [[emu:tool a]]";
    const plan = planTurn(input(text, { declaredTools: ["a", "b", "c"] }));
    expect(plan.calls.map((call) => [call.kind === "mcp" ? call.name : "", call.step])).toEqual([
      ["a", 0],
      ["b", 0],
      ["c", 1],
      ["a", 2],
    ]);
  });

  it("on a rebuilt resume, goes on with the steps whose results the state does not hold yet", () => {
    const text = "[[emu:tool a]] [[emu:tool b]] [[emu:then]] [[emu:tool c]]";
    const history = [
      { role: "user" as const, text },
      { role: "tool-result" as const, name: "a", text: "1" },
      { role: "tool-result" as const, name: "b", text: "2" },
    ];
    const plan = planTurn(input(text, { resume: true, history, declaredTools: ["a", "b", "c"] }));
    expect(plan.calls).toEqual([{ kind: "mcp", name: "c", args: {}, step: 1 }]);
    expect(composeReply(plan, [{ name: "c", text: "3" }])).toBe("a returned: 1\nb returned: 2\nc returned: 3");
    const done = [...history, { role: "tool-result" as const, name: "c", text: "3" }];
    expect(planTurn(input(text, { resume: true, history: done, declaredTools: ["a", "b", "c"] })).calls).toEqual([]);
  });

  it("on a rebuilt resume, a step the state holds only some results of is answered, not called again", () => {
    const one = "[[emu:tool a]] [[emu:tool b]]";
    const partial = [
      { role: "user" as const, text: one },
      { role: "tool-result" as const, name: "a", text: "1" },
    ];
    expect(planTurn(input(one, { resume: true, history: partial, declaredTools: ["a", "b"] })).calls).toEqual([]);
    const two = `${one} [[emu:then]] [[emu:tool c]]`;
    const plan = planTurn(
      input(two, {
        resume: true,
        history: [{ ...partial[0]!, text: two }, partial[1]!],
        declaredTools: ["a", "b", "c"],
      }),
    );
    expect(plan.calls).toEqual([{ kind: "mcp", name: "c", args: {}, step: 1 }]);
  });

  it("carries faults, rate and tokens", () => {
    const plan = planTurn(input("[[emu:tokens 4]] [[emu:rate 9]] [[emu:drop 2]]"));
    expect(plan).toEqual({
      thinkingTokens: 0,
      calls: [],
      webCalls: [],
      modeSwitches: [],
      textParts: [fillerText(4)],
      tokensPerSecond: 9,
      fault: { kind: "drop", afterTokens: 2 },
    });
  });

  it("answers a tool directive in a request without any tools (a title request) with a short plain text", () => {
    const plan = planTurn(input("Generate a title: [[emu:tool lookup {}]]"));
    expect(plan.calls).toEqual([]);
    expect(plan.textParts).toEqual(["Tool call: lookup"]);
  });

  it("recalls a first message that held only a directive as that directive text", () => {
    const history = [
      { role: "user" as const, text: " [[emu:think 2]] " },
      { role: "assistant" as const, text: "ok" },
    ];
    expect(planTurn(input("[[emu:recall]]", { history })).textParts).toEqual(["First message: [[emu:think 2]]"]);
  });

  it("reports directive problems instead of echoing", () => {
    expect(planTurn(input("[[emu:think x]]")).textParts[0]).toMatch(/^Directive error:/);
  });
});

describe("tokens", () => {
  it("tokenize round-trips the text and counts words", () => {
    const text = "You said:  hello\nworld ";
    expect(tokenize(text).join("")).toBe(text);
    expect(tokenize(text)).toHaveLength(4);
    expect(tokenize(fillerText(25))).toHaveLength(25);
    expect(tokenize("")).toEqual([]);
  });
});
