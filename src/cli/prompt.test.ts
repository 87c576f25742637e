import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { applyKeys, readStream } from "./prompt.js";

describe("applyKeys (secret prompt line editing)", () => {
  it("collects printable keys until Enter", () => {
    expect(applyKeys("", "abc")).toEqual({ line: "abc", state: "typing" });
    expect(applyKeys("abc", "d\r")).toEqual({ line: "abcd", state: "done" });
  });

  it("handles backspace, ignores control keys, Ctrl-C cancels, Ctrl-D ends", () => {
    expect(applyKeys("abc", "\u007f\u007fz\u001b")).toEqual({ line: "az", state: "typing" });
    expect(applyKeys("abc", "\u0003")).toEqual({ line: "", state: "canceled" });
    expect(applyKeys("abc", "\u0004")).toEqual({ line: "abc", state: "done" });
  });

  it("stops at the first Enter of a pasted chunk", () => {
    expect(applyKeys("", "key\nrest")).toEqual({ line: "key", state: "done" });
  });
});

describe("readStream", () => {
  it("reads a piped stream to the end", async () => {
    const stream = new PassThrough();
    stream.end("line 1\nline 2\n");
    expect(await readStream(stream)).toBe("line 1\nline 2\n");
  });
});
