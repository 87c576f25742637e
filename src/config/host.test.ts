import { describe, expect, it } from "vitest";
import type { ProxyError } from "../util/errors.js";
import { assertSafeBinding, EXPOSED_API_KEY_MIN_LENGTH, isLoopbackHost } from "./host.js";

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
  const strong = "k".repeat(EXPOSED_API_KEY_MIN_LENGTH);
  const refusal = (config: Parameters<typeof assertSafeBinding>[0]): ProxyError | undefined => {
    try {
      assertSafeBinding(config);
      return undefined;
    } catch (caught) {
      return caught as ProxyError;
    }
  };

  it("allows loopback without a key or with any key, and an exposed bridge with a key long enough", () => {
    expect(refusal({ host: "127.0.0.1", apiKey: undefined })).toBeUndefined();
    expect(refusal({ host: "127.0.0.1", apiKey: "k", allowedHosts: ["my-box.lan"] })).toBeUndefined();
    expect(refusal({ host: "0.0.0.0", apiKey: strong })).toBeUndefined();
    expect(refusal({ host: "127.0.0.1", apiKey: strong, allowedHosts: ["*"] })).toBeUndefined();
  });

  it("refuses any Host name on loopback without a key: DNS rebinding would reach it", () => {
    const error = refusal({ host: "127.0.0.1", apiKey: undefined, allowedHosts: ["gateway.lan", "*"] });
    expect(error?.code).toBe("invalid_request");
    expect(error?.message).toContain("--allowed-hosts *");
    expect(error?.message).toContain("DNS rebinding");
    expect(error?.param).toBe("allowedHosts");
  });

  it("refuses a short key where the bridge is exposed", () => {
    const short = "k".repeat(EXPOSED_API_KEY_MIN_LENGTH - 1);
    expect(refusal({ host: "0.0.0.0", apiKey: short })?.message).toMatch(/listen on 0\.0\.0\.0 with an API key of 15/);
    expect(refusal({ host: "::1", apiKey: short, allowedHosts: ["*"] })?.message).toContain("at least 16");
  });

  it("refuses a key with whitespace around it anywhere: no client could send it", () => {
    expect(refusal({ host: "127.0.0.1", apiKey: " " })?.message).toContain("whitespace");
    expect(refusal({ host: "0.0.0.0", apiKey: ` ${strong}` })?.message).toContain("whitespace");
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
