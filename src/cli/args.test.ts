import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { parseCommandLine } from "./args.js";

describe("parseCommandLine", () => {
  it("maps --json, --config and setting flags to config flags by setting name", () => {
    const parsed = parseCommandLine("status", [
      "--json",
      "--config",
      "/etc/cb.json",
      "--cursor-api-url",
      "http://127.0.0.1:1",
      "--port=9000",
    ]);
    expect(parsed.flags).toEqual({
      json: true,
      config: { config: "/etc/cb.json", cursorApiUrl: "http://127.0.0.1:1", port: "9000" },
    });
    expect(parsed.values).toEqual({});
  });

  it("gives the command's own options precedence over a setting flag of the same name", () => {
    const parsed = parseCommandLine("login", ["--api-key", "--no-browser"], {
      "api-key": { type: "boolean" },
      "no-browser": { type: "boolean" },
    });
    expect(parsed.values).toEqual({ "api-key": true, "no-browser": true });
    expect(parsed.flags.config).toEqual({});
  });

  it("turns unknown options into invalid_request naming the option", () => {
    let caught: unknown;
    try {
      parseCommandLine("models", ["--frobnicate"]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ProxyError);
    expect((caught as ProxyError).code).toBe("invalid_request");
    expect((caught as ProxyError).message).toContain("--frobnicate");
    expect((caught as ProxyError).message).toContain("cursor-bridge models --help");
  });

  it("never repeats a stray positional argument (it may be a pasted secret)", () => {
    expect(() => parseCommandLine("login", ["sk_live_secretvalue123"])).toThrowError(/not shown/);
    try {
      parseCommandLine("login", ["sk_live_secretvalue123"]);
    } catch (error) {
      expect((error as Error).message).not.toContain("secretvalue");
    }
  });
});
