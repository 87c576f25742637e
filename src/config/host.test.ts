import { describe, expect, it } from "vitest";
import type { ProxyError } from "../util/errors.js";
import { assertSafeBinding, isLoopbackHost } from "./host.js";

describe("isLoopbackHost", () => {
  it.each([
    "127.0.0.1",
    "127.1.2.3",
    "localhost",
    "LOCALHOST",
    "api.localhost",
    "::1",
    "[::1]",
    "::ffff:127.0.0.1",
    "0:0:0:0:0:0:0:1",
  ])("%s is loopback", (host) => expect(isLoopbackHost(host)).toBe(true));
  it.each(["0.0.0.0", "::", "192.168.1.2", "10.0.0.1", "example.com", "128.0.0.1", "::ffff:10.0.0.1", ""])(
    "%s is not loopback",
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );
});

describe("assertSafeBinding", () => {
  it("allows loopback without a key and anything with a key", () => {
    expect(() => assertSafeBinding({ host: "127.0.0.1", apiKey: undefined })).not.toThrow();
    expect(() => assertSafeBinding({ host: "0.0.0.0", apiKey: "k" })).not.toThrow();
  });

  it("refuses a non-loopback host without a key", () => {
    let error: ProxyError | undefined;
    try {
      assertSafeBinding({ host: "0.0.0.0", apiKey: undefined });
    } catch (caught) {
      error = caught as ProxyError;
    }
    expect(error?.code).toBe("invalid_request");
    expect(error?.message).toContain("0.0.0.0");
    expect(error?.message).toContain("CURSOR_BRIDGE_API_KEY");
  });
});
