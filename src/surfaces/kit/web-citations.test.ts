import { describe, expect, it } from "vitest";
import { citedReferences } from "./web-citations.js";

const ref = (url: string) => ({ title: url, url, chunk: "" });

describe("citedReferences", () => {
  it("lists each result the text names once, at its first occurrence, in text order (#27)", () => {
    const a = ref("https://a.test/1");
    const b = ref("https://b.test/2");
    const text = `See ${b.url} and ${a.url}, again ${b.url}.`;
    expect(citedReferences(text, [a, b, ref("https://c.test/"), a])).toEqual([
      { reference: b, start: 4, end: 4 + b.url.length },
      { reference: a, start: text.indexOf(a.url), end: text.indexOf(a.url) + a.url.length },
    ]);
    expect(citedReferences("no links", [a])).toEqual([]);
  });
});
