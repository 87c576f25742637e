import { describe, expect, it } from "vitest";
import { createLogger, redact, redactText } from "./logger.js";

const JWT =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhdXRoMHx1c2VyXzEyMyIsImV4cCI6MTc2NzIyNTYwMH0.c2lnbmF0dXJlLWJ5dGVzLWhlcmU";

describe("logger redaction", () => {
  it("removes bearer tokens, JWTs and API keys from text", () => {
    const text = redactText(
      `authorization: Bearer abc.def-123 then ${JWT} and key_abcdefghij1234 and cur_0123456789abcdef`,
    );
    expect(text).not.toContain("abc.def-123");
    expect(text).not.toContain(JWT);
    expect(text).not.toContain("key_abcdefghij1234");
    expect(text).not.toContain("cur_0123456789abcdef");
  });

  it("redacts secret-looking keys at any depth but keeps token counts", () => {
    const out = redact({
      accessToken: "a",
      nested: { refresh_token: "b", "x-api-key": "c", headers: { authorization: "d" } },
      tokens: 42,
      max_tokens: 10,
    }) as Record<string, unknown>;
    expect(out).toEqual({
      accessToken: "[redacted]",
      nested: { refresh_token: "[redacted]", "x-api-key": "[redacted]", headers: { authorization: "[redacted]" } },
      tokens: 42,
      max_tokens: 10,
    });
  });

  it("never writes a token to a log line, whatever field or message carries it", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", sink: (line) => lines.push(line), format: "json" });
    logger.info(`refreshing with ${JWT}`, { error: new Error(`rejected Bearer ${JWT}`), token: JWT, tokens: 5 });
    logger.child({ apiKey: "sk_live_1234567890" }).warn("child");
    expect(lines.join("\n")).not.toContain(JWT);
    expect(lines.join("\n")).not.toContain("sk_live_1234567890");
    expect(lines[0]).toContain('"tokens":5');
  });

  it("drops lines below the level", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "warn", sink: (line) => lines.push(line) });
    logger.info("no");
    logger.error("yes");
    expect(lines).toHaveLength(1);
  });
});
