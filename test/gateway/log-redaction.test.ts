/**
 * What the log redacts, checked against the real things: every credential the bridge makes or takes in the shape it
 * really has (made by the code that makes it where the bridge makes it), and every error code and detail the bridge
 * writes as `code=` / `detail=`, which must stay readable (a budget refusal logged as `code=[redacted-key]` told an
 * operator nothing).
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createJwtSigner } from "../../src/emulator/jwt.js";
import { newKey, newKeyId } from "../../src/gateway/keys/key-material.js";
import { createLogger, redactText } from "../../src/util/logger.js";

/** Every double-quoted snake_case literal of a source file (the code and detail unions, the wire codes). */
async function literalsOf(path: string): Promise<string[]> {
  const text = await readFile(new URL(`../../${path}`, import.meta.url), "utf8");
  return [...new Set([...text.matchAll(/"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"/g)].map((match) => match[1] ?? ""))];
}

function secrets(): Array<[string, string]> {
  const hex = () => randomBytes(32).toString("hex");
  const jwt = createJwtSigner(randomBytes(32).toString("hex")).sign({ userId: "user_1" }, "session", 3600);
  return [
    ["a virtual key", newKey()],
    ["a Cursor user API key (crsr_ and 64 hex digits)", `crsr_${hex()}`],
    ["a Cursor API key (key_ and 64 hex digits)", `key_${hex()}`],
    ["a Cursor access token (a JWT)", jwt],
    ["an OpenAI key sent by mistake", `sk-proj-${randomBytes(24).toString("base64url")}`],
    ["a Stripe-style secret", `sk_live_${randomBytes(12).toString("hex")}`],
  ];
}

describe("log redaction against the real formats", () => {
  it.each(secrets())("redacts %s wherever it sits in a line", (_kind, secret) => {
    for (const text of [secret, `x ${secret} y`, `(${secret})`, `key=${secret},`, `"${secret}"`]) {
      expect(redactText(text)).not.toContain(secret.slice(4));
    }
  });

  it.each([
    ["a key with a dash in it", "key_Zz9aB8cD7eF6gH5-iJ4kL3"],
    ["a short first part, then dashes and underscores", "cur_AbC9-xY_zq0123456789"],
    ["hex digits with an underscore tail", "crsr_0123456789abcdef_tail"],
  ])("redacts %s whole, leaving no tail", (_kind, secret) => {
    const tail = secret.slice(secret.indexOf("_") + 1);
    for (const text of [secret, `x ${secret} y`, `(${secret})`, `key=${secret},`, `"${secret}"`]) {
      const redacted = redactText(text);
      expect(redacted).toBe(text.replace(secret, "[redacted-key]"));
      for (const part of tail.split(/[-_]/)) expect(redacted).not.toContain(part);
    }
  });

  it("redacts the admin key (a hex string of the operator's choosing) as a bearer token and under its field name", () => {
    const adminKey = randomBytes(24).toString("hex");
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", sink: (line) => lines.push(line) });
    logger.warn("refused", { authorization: `Bearer ${adminKey}`, adminKey, note: `Bearer ${adminKey}` });
    expect(lines.join("\n")).not.toContain(adminKey);
  });

  it("keeps every error code, detail and wire code readable, in text and in a logged field", async () => {
    const literals = [
      ...(await literalsOf("src/util/errors.ts")),
      ...(await literalsOf("src/surfaces/kit/openai-error.ts")),
      ...(await literalsOf("src/surfaces/messages/error-body.ts")),
    ];
    // The lists hold what this test is about; a parse that found nothing would pass vacuously.
    expect(literals).toEqual(expect.arrayContaining(["key_budget_exceeded", "key_rpm", "key_tpm", "key_parallel"]));
    expect(literals.length).toBeGreaterThan(60);
    for (const literal of literals) {
      expect(redactText(literal)).toBe(literal);
      expect(redactText(`code=${literal} detail=${literal}`)).toBe(`code=${literal} detail=${literal}`);
    }
    const lines: string[] = [];
    createLogger({ sink: (line) => lines.push(line) }).warn("POST /v1/chat/completions 429", {
      code: "key_budget_exceeded",
      detail: "spent",
    });
    expect(lines[0]).toContain("code=key_budget_exceeded");
  });

  it("keeps the ids the gateway makes readable (a key's record id is no secret)", () => {
    const id = newKeyId();
    expect(redactText(`key ${id} revoked`)).toBe(`key ${id} revoked`);
  });
});
