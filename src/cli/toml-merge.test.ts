import { describe, expect, it } from "vitest";
import { MergeRefused, mergeToml, parseDottedKey, rootStringValue, scanToml, type TomlEdit } from "./toml-merge.js";

const MARKER = "# managed";
const edit: TomlEdit = {
  rootKeys: [
    ["model", '"auto"'],
    ["model_provider", '"cb"'],
  ],
  marker: MARKER,
  tables: [
    {
      path: ["model_providers", "cb"],
      body: [
        ["name", '"cb"'],
        ["base_url", '"http://127.0.0.1:8765/v1"'],
      ],
    },
    { path: ["profiles", "cb"], body: [["model", '"auto"']] },
  ],
};

const OURS = `${MARKER}
[model_providers.cb]
name = "cb"
base_url = "http://127.0.0.1:8765/v1"

${MARKER}
[profiles.cb]
model = "auto"
`;

describe("parseDottedKey", () => {
  it("splits bare, basic and literal segments", () => {
    expect(parseDottedKey(`model_providers."cursor-bridge".'x y'`)).toEqual([
      "model_providers",
      "cursor-bridge",
      "x y",
    ]);
    expect(parseDottedKey(" a . b ")).toEqual(["a", "b"]);
    expect(parseDottedKey("a b")).toBeUndefined();
    expect(parseDottedKey("")).toBeUndefined();
  });
});

describe("scanToml", () => {
  it("does not take brackets inside strings or multi-line values for headers", () => {
    const lines = scanToml(
      'a = """\n[not.a.table]\n"""\nb = [\n  "x",\n[ "y" ],\n]\nc = "[q]" # [r]\n[real]\nd = \'\'\'\n[no]\n\'\'\'',
    );
    expect(lines.filter((line) => line.header).map((line) => line.header?.path)).toEqual([["real"]]);
    expect(lines.filter((line) => line.key).map((line) => line.key)).toEqual([["a"], ["b"], ["c"], ["d"]]);
  });

  it("handles escaped quotes and quotes next to a closing delimiter", () => {
    const lines = scanToml('a = """x \\""" still"""\nb = """q""""\n[t]');
    expect(lines.map((line) => line.header?.path ?? line.key)).toEqual([["a"], ["b"], ["t"]]);
  });
});

describe("mergeToml", () => {
  it("writes everything into an empty file", () => {
    expect(mergeToml("", edit)).toBe(`model = "auto"\nmodel_provider = "cb"\n\n${OURS}`);
  });

  it("keeps every other line as it was and puts new top-level keys before the first table", () => {
    const source = `# my settings
approval_policy = "never"   # keep me

[model_providers.other]
name = "other"
base_url = "https://example.com/v1"

[mcp_servers.docs]
command = "docs"
args = [
  "--flag",
  "[x]",
]
`;
    const merged = mergeToml(source, edit);
    expect(merged).toBe(`# my settings
approval_policy = "never"   # keep me
model = "auto"
model_provider = "cb"

[model_providers.other]
name = "other"
base_url = "https://example.com/v1"

[mcp_servers.docs]
command = "docs"
args = [
  "--flag",
  "[x]",
]

${OURS}`);
  });

  it("replaces its own tables (and sub-tables) and values in place, and is idempotent", () => {
    const once = mergeToml('model = "gpt-5"\n\n[tui]\nx = 1\n', edit);
    const changed: TomlEdit = {
      ...edit,
      tables: [
        { path: ["model_providers", "cb"], body: [["base_url", '"http://127.0.0.1:9000/v1"']] },
        { path: ["profiles", "cb"], body: [["model", '"auto"']] },
      ],
    };
    const withSubTable = once.replace("[profiles.cb]", '[model_providers.cb.http_headers]\nX = "1"\n\n[profiles.cb]');
    const twice = mergeToml(withSubTable, changed);
    expect(twice).toBe(`model = "auto"
model_provider = "cb"

[tui]
x = 1

${MARKER}
[model_providers.cb]
base_url = "http://127.0.0.1:9000/v1"

${MARKER}
[profiles.cb]
model = "auto"
`);
    expect(mergeToml(twice, changed)).toBe(twice);
  });

  it("recognises quoted headers of its own tables", () => {
    const merged = mergeToml('[model_providers."cb"]\nbase_url = "old"\n', { ...edit, rootKeys: [] });
    expect(merged).not.toContain("old");
    expect(merged.match(/\[model_providers\.cb\]/g)).toHaveLength(1);
  });

  it("refuses owned tables written as inline tables or dotted keys, and multi-line values of its keys", () => {
    expect(() => mergeToml('model_providers = { cb = { name = "x" } }\n', edit)).toThrow(MergeRefused);
    expect(() => mergeToml('[model_providers]\ncb = { name = "x" }\n', edit)).toThrow(
      /line 2 defines model_providers\.cb/,
    );
    expect(() => mergeToml('[model_providers]\ncb.name = "x"\n', edit)).toThrow(MergeRefused);
    expect(() => mergeToml('model = """\nx"""\n', edit)).toThrow(/line 1 gives model a multi-line value/);
    expect(() => mergeToml('[[profiles.cb]]\nmodel = "x"\n', edit)).toThrow(/array of tables/);
  });

  it("reads CRLF files", () => {
    expect(mergeToml("a = 1\r\n[t]\r\nb = 2\r\n", { ...edit, rootKeys: [] })).toBe(`a = 1\n[t]\nb = 2\n\n${OURS}`);
  });
});

describe("rootStringValue", () => {
  it("reads a top-level string key only", () => {
    expect(rootStringValue('model_provider = "x\\"y" # c\n', "model_provider")).toBe('x"y');
    expect(rootStringValue("model_provider = 'lit'\n", "model_provider")).toBe("lit");
    expect(rootStringValue('[t]\nmodel_provider = "x"\n', "model_provider")).toBeUndefined();
    expect(rootStringValue("", "model_provider")).toBeUndefined();
  });
});
