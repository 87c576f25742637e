/**
 * The HTTP app's plain options for tests and the in-process bench: no API key, no CORS, 4 MiB bodies, reasoning as
 * `reasoning_content`, the emulator as upstream, not logged in. Each caller overrides what it is about.
 */
import type { AppOptions } from "../../src/surfaces/kit/deps.js";

export function testAppOptions(overrides: Partial<AppOptions> = {}): AppOptions {
  return {
    apiKey: undefined,
    corsOrigins: [],
    maxBodyBytes: 4 * 1024 * 1024,
    reasoningOutput: "reasoning_content",
    upstream: "emulator",
    loggedIn: false,
    version: "test",
    ...overrides,
  };
}
