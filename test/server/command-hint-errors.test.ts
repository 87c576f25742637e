/**
 * The launcher hint of util/command-hint.ts reaches both error shapes the server writes (moved here from
 * src/util/command-hint.test.ts: a util/ test may not import the surfaces above it).
 */
import { afterEach, describe, expect, it } from "vitest";
import { toOpenAIError } from "../../src/surfaces/kit/openai-error.js";
import { toAnthropicError } from "../../src/surfaces/messages/error-body.js";
import { setLauncher } from "../../src/util/command-hint.js";
import { ProxyError } from "../../src/util/errors.js";

afterEach(() => {
  setLauncher("cursor-bridge");
});

describe("command hints in error bodies", () => {
  it("reach the server's 401 in both error shapes", () => {
    setLauncher("npm run --silent cli --");
    const rejected = new ProxyError("unauthenticated", "Cursor rejected the session; run `cursor-bridge login` again.");
    expect(toOpenAIError(rejected).body.error.message).toContain("run `npm run --silent cli -- login` again");
    expect(toAnthropicError(rejected).body.error.message).toContain("run `npm run --silent cli -- login` again");
    const bare = new ProxyError("unauthenticated", "Token expired.");
    expect(toOpenAIError(bare).body.error.message).toBe(
      "Token expired. Run `npm run --silent cli -- login` to sign in to Cursor.",
    );
  });
});
