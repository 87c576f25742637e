import { describe, expect, it } from "vitest";
import { describeEmulatorDirectives } from "./directive-help.js";
import { DIRECTIVES, type Directive, parseDirectives } from "./directives.js";

describe("parseDirectives", () => {
  it("strips directives from the text and keeps their order", () => {
    const parsed = parseDirectives('look [[emu:tool search {"q":"a ]] b","n":[1,[2]]}]] then  [[emu:think 5]] done');
    expect(parsed.text).toBe("look then done");
    expect(parsed.directives).toEqual([
      { kind: "tool", name: "search", args: { q: "a ]] b", n: [1, [2]] } },
      { kind: "think", tokens: 5 },
    ]);
    expect(parsed.problems).toEqual([]);
  });

  it("turns every run of blanks and tabs into one space", () => {
    expect(parseDirectives("a b\tc \t d  e\t\tf\n g").text).toBe("a b c d e f\n g");
  });

  it("parses every keyword", () => {
    const parsed = parseDirectives(
      '[[emu:native shell {"command":"ls"}]][[emu:tokens 3]][[emu:rate 2.5]][[emu:recall]][[emu:error usage_limit]][[emu:stall 4]][[emu:drop 0]][[emu:tool bare]][[emu:abort-exec 250]][[emu:overflow]][[emu:truncate]][[emu:tool-gap 40]]',
    );
    expect(parsed.directives).toEqual([
      { kind: "native", native: "shell", args: { command: "ls" } },
      { kind: "tokens", tokens: 3 },
      { kind: "rate", tokensPerSecond: 2.5 },
      { kind: "recall" },
      { kind: "error", code: "usage_limit" },
      { kind: "stall", afterTokens: 4 },
      { kind: "drop", afterTokens: 0 },
      { kind: "tool", name: "bare", args: {} },
      { kind: "abort-exec", afterMs: 250 },
      { kind: "overflow" },
      { kind: "truncate" },
      { kind: "tool-gap", gapMs: 40 },
    ]);
  });

  it("parses [[emu:overflow once]] as the once-per-process overflow, and plain [[emu:overflow]] as before", () => {
    expect(parseDirectives("a [[emu:overflow once]]").directives).toEqual([{ kind: "overflow", once: true }]);
    expect(parseDirectives("a [[emu:overflow]]").directives).toEqual([{ kind: "overflow" }]);
  });

  it("parses [[emu:error NAME]] for every ErrorDetails.Error name, with or without ERROR_, and `retryable`", () => {
    expect(parseDirectives("[[emu:error MODEL_BLOCKED]]").directives).toEqual([
      { kind: "error", code: { name: "MODEL_BLOCKED", retryable: false } },
    ]);
    expect(parseDirectives("[[emu:error ERROR_ACCOUNT_CLOSED retryable]]").directives).toEqual([
      { kind: "error", code: { name: "ACCOUNT_CLOSED", retryable: true } },
    ]);
    // The lower-case codes keep their meaning: `internal` is not ERROR_INTERNAL.
    expect(parseDirectives("[[emu:error internal]]").directives).toEqual([{ kind: "error", code: "internal" }]);
    expect(parseDirectives("[[emu:error INTERNAL]]").directives).toEqual([
      { kind: "error", code: { name: "INTERNAL", retryable: false } },
    ]);
  });

  it.each([
    ["[[emu:error NOT_A_VALUE]]", /ErrorDetails\.Error name/],
    ["[[emu:error MODEL_BLOCKED soon]]", /ErrorDetails\.Error name/],
    ["[[emu:think many]]", /whole number/],
    ["[[emu:abort-exec soon]]", /whole number/],
    ["[[emu:tool-gap -5]]", /whole number/],
    ["[[emu:rate 0]]", /positive/],
    ["[[emu:error nope]]", /one of/],
    ["[[emu:native rm {}]]", /kind must be one of/],
    ["[[emu:tool x {bad json}]]", /not valid JSON/],
    ["[[emu:tool x [1]]]", /not valid JSON|JSON object/],
    ["[[emu:frobnicate]]", /Unknown directive/],
    ["[[emu:recall now]]", /no arguments/],
    ["[[emu:overflow 3]]", /no argument or "once"/],
    ["[[emu:truncate now]]", /no arguments/],
    ['[[emu:todos {"a":"done"}]]', /status must be one of/],
    ["[[emu:todos [1]]]", /JSON object/],
    ["hello [[emu:think 3", /Unterminated/],
  ])("reports %s as a problem", (text, problem) => {
    const parsed = parseDirectives(text);
    expect(parsed.directives).toEqual([]);
    expect(parsed.problems[0]).toMatch(problem);
  });

  it("says why tool arguments are not JSON and mentions clients that quote arguments with spaces", () => {
    const [problem] = parseDirectives("[[emu:tool x {'a': 1}]]").problems;
    expect(problem).toMatch(/^\[\[emu:tool x\]\] arguments are not valid JSON: .+ \(got \{'a': 1\}\)\./);
    expect(problem).toContain("some clients quote or escape arguments that contain spaces");
  });

  it("parses a todo list in order", () => {
    expect(parseDirectives('[[emu:todos {"write tests":"completed","ship":"pending"}]]').directives).toEqual([
      {
        kind: "todos",
        todos: [
          { content: "write tests", status: "completed" },
          { content: "ship", status: "pending" },
        ],
      },
    ]);
  });

  it("leaves text without directives alone", () => {
    expect(parseDirectives("  plain [[not a directive]] text ")).toEqual({
      text: "plain [[not a directive]] text",
      directives: [],
      problems: [],
    });
  });

  it('accepts a directive inside an argument `opencode run` quoted (each " was a quote)', () => {
    // What OpenCode 1.18 sends for: opencode run 'Hi [[emu:tool bash {"command":"echo \"x y\""}]]'
    const sent = String.raw`"Hi [[emu:tool bash {\"command\":\"echo \\"x y\\"\"}]]"`;
    expect(parseDirectives(sent)).toEqual({
      text: '"Hi "',
      directives: [{ kind: "tool", name: "bash", args: { command: 'echo "x y"' } }],
      problems: [],
    });
    expect(parseDirectives(String.raw`"[[emu:error usage_limit]] [[emu:tool t {\"a\":1}]]"`).directives).toEqual([
      { kind: "error", code: "usage_limit" },
      { kind: "tool", name: "t", args: { a: 1 } },
    ]);
    // A message that parses as written is never rewritten.
    expect(parseDirectives(String.raw`[[emu:tool t {"a":"\"q\""}]]`).directives).toEqual([
      { kind: "tool", name: "t", args: { a: '"q"' } },
    ]);
  });

  it("has a table entry for every kind of directive the parser makes", () => {
    // A new kind fails to compile here until it is listed, and then this test until the table has it.
    const kinds: Record<Directive["kind"], true> = {
      tool: true,
      native: true,
      think: true,
      tokens: true,
      cached: true,
      rate: true,
      recall: true,
      "echo-model": true,
      "describe-image": true,
      error: true,
      stall: true,
      drop: true,
      overflow: true,
      truncate: true,
      "slow-cancel": true,
      // biome-ignore lint/suspicious/noThenProperty: a record keyed by directive kind, never awaited.
      then: true,
      task: true,
      "abort-exec": true,
      "tool-chunks": true,
      "tool-gap": true,
      "tool-cut": true,
      "tool-count": true,
      "tool-listed-after": true,
      "tool-args-id": true,
      todos: true,
      "web-search": true,
      "web-fetch": true,
      "switch-mode": true,
    };
    expect(new Set(DIRECTIVES.map((directive) => directive.keyword))).toEqual(new Set(Object.keys(kinds)));
  });

  it("documents every keyword of the directive table in the help text, and every example parses as its keyword", () => {
    const help = describeEmulatorDirectives();
    for (const { keyword, example } of DIRECTIVES) {
      expect(help).toContain(`[[emu:${keyword}`);
      const parsed = parseDirectives(example);
      expect(parsed.problems, example).toEqual([]);
      expect(parsed.directives.map((d) => d.kind)).toEqual([keyword]);
    }
    expect(parseDirectives("[[emu:frobnicate]]").problems[0]).toContain("known: tool, native, echo-model, think");
  });

  it("parses switch-mode with a lower-case mode id and an optional explanation", () => {
    expect(parseDirectives("[[emu:switch-mode plan Needs a plan first.]]").directives).toEqual([
      { kind: "switch-mode", mode: "plan", explanation: "Needs a plan first." },
    ]);
    expect(parseDirectives("[[emu:switch-mode agent]]").directives).toEqual([
      { kind: "switch-mode", mode: "agent", explanation: "" },
    ]);
    expect(parseDirectives("[[emu:switch-mode]]").problems[0]).toContain("needs a mode id");
    expect(parseDirectives("[[emu:switch-mode Plan now]]").problems[0]).toContain("needs a mode id");
  });

  it("parses tool-cut with a call number from 1", () => {
    expect(parseDirectives("[[emu:tool-cut 2]]").directives).toEqual([{ kind: "tool-cut", call: 2 }]);
    expect(parseDirectives("[[emu:tool-cut 0]]").problems).toEqual([
      "[[emu:tool-cut]] needs a call number of at least 1.",
    ]);
  });

  it("parses tool-count with a count from 1", () => {
    expect(parseDirectives("[[emu:tool-count 4]]").directives).toEqual([{ kind: "tool-count", count: 4 }]);
    expect(parseDirectives("[[emu:tool-count 0]]").problems).toEqual([
      "[[emu:tool-count]] needs a count of at least 1.",
    ]);
  });

  it("parses tool-listed-after with a call number from 1", () => {
    expect(parseDirectives("[[emu:tool-listed-after 2]]").directives).toEqual([{ kind: "tool-listed-after", call: 2 }]);
    expect(parseDirectives("[[emu:tool-listed-after 0]]").problems).toEqual([
      "[[emu:tool-listed-after]] needs a call number of at least 1.",
    ]);
  });

  it("parses tool-args-id for every call or for the Nth from 1", () => {
    expect(parseDirectives("[[emu:tool-args-id]] [[emu:tool-args-id 2]]").directives).toEqual([
      { kind: "tool-args-id" },
      { kind: "tool-args-id", call: 2 },
    ]);
    for (const bad of ["0", "x", "-1"]) {
      expect(parseDirectives(`[[emu:tool-args-id ${bad}]]`).problems).toEqual([
        `[[emu:tool-args-id]] takes no argument or a call number of at least 1, got "${bad}".`,
      ]);
    }
  });

  it("parses web-search and web-fetch, and refuses them without a query or URL", () => {
    expect(parseDirectives("[[emu:web-search node 22 release]] go").directives).toEqual([
      { kind: "web-search", query: "node 22 release" },
    ]);
    expect(parseDirectives("[[emu:web-fetch https://a.test/x?y=1]]").directives).toEqual([
      { kind: "web-fetch", url: "https://a.test/x?y=1" },
    ]);
    expect(parseDirectives("[[emu:web-search]]").problems).toEqual(["[[emu:web-search]] needs a query."]);
    expect(parseDirectives("[[emu:web-fetch ftp://a.test]]").problems[0]).toMatch(/needs one http\(s\) URL/);
  });
});
