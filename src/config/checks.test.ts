import { describe, expect, it } from "vitest";
import { arrayOf, either, httpUrl, matching, number, oneOf, optional, string } from "./checks.js";

describe("config checks", () => {
  it("accept valid values unchanged and refuse others with a reason", () => {
    expect(string(1)("x")).toEqual({ ok: true, value: "x" });
    expect(string(1)("")).toMatchObject({ ok: false, message: expect.stringMatching(/>=1 characters/) });
    expect(string(16, "use at least 16 characters")("short")).toEqual({
      ok: false,
      message: "use at least 16 characters",
    });
    expect(string()(3)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/expected string, received number/),
    });
    const port = number({ integer: true, min: 0, max: 65535 });
    expect(port(8765)).toEqual({ ok: true, value: 8765 });
    expect(port(1.5)).toMatchObject({ ok: false });
    expect(port(70000)).toMatchObject({ ok: false, message: expect.stringMatching(/<=65535/) });
    expect(port(-1)).toMatchObject({ ok: false, message: expect.stringMatching(/>=0/) });
    expect(port(Number.NaN)).toMatchObject({ ok: false });
    expect(port("80")).toMatchObject({ ok: false });
    expect(oneOf(["auto", "cursor"])("cursor")).toEqual({ ok: true, value: "cursor" });
    expect(oneOf(["auto", "cursor"])("x")).toEqual({
      ok: false,
      message: 'Invalid option: expected one of "auto"|"cursor"',
    });
    expect(httpUrl("https://api2.cursor.sh")).toMatchObject({ ok: true });
    expect(httpUrl("http://127.0.0.1:8765")).toMatchObject({ ok: true });
    expect(httpUrl("ftp://example.com")).toEqual({ ok: false, message: "Invalid URL" });
    expect(httpUrl("not a url")).toEqual({ ok: false, message: "Invalid URL" });
    expect(optional(httpUrl)(undefined)).toEqual({ ok: true, value: undefined });
    const hosts = arrayOf(matching(/^[a-z.]+$/, "expected a host name"));
    expect(hosts(["a.lan", "b"])).toEqual({ ok: true, value: ["a.lan", "b"] });
    expect(hosts(["a.lan", "B!"])).toEqual({ ok: false, message: "expected a host name" });
    expect(hosts("a.lan")).toMatchObject({ ok: false });
    const store = either(oneOf(["file"]), matching(/^redis:\/\//, "expected file or redis://host:port/db"));
    expect(store("file")).toEqual({ ok: true, value: "file" });
    expect(store("redis://x")).toEqual({ ok: true, value: "redis://x" });
    expect(store("mysql://x")).toEqual({ ok: false, message: "expected file or redis://host:port/db" });
  });
});
