import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildLoginUrl, createPkcePair, pkceChallenge } from "./pkce.js";

describe("pkce", () => {
  it("computes the RFC 7636 appendix B challenge", async () => {
    expect(await pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("derives a 43-char verifier from 32 random bytes and hashes it", async () => {
    const bytes = new Uint8Array(32).map((_, i) => i);
    const pair = await createPkcePair({ randomBytes: () => bytes, randomUUID: () => "uuid-1" });
    expect(pair.verifier).toBe(Buffer.from(bytes).toString("base64url"));
    expect(pair.verifier).toHaveLength(43);
    expect(pair.challenge).toBe(createHash("sha256").update(pair.verifier).digest("base64url"));
    expect(pair.uuid).toBe("uuid-1");
  });

  it("uses real randomness by default", async () => {
    const [a, b] = await Promise.all([createPkcePair(), createPkcePair()]);
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("builds the loginDeepControl URL without the verifier", () => {
    const url = buildLoginUrl("https://cursor.com", { challenge: "ch_1", uuid: "u-1" });
    expect(url).toBe("https://cursor.com/loginDeepControl?challenge=ch_1&uuid=u-1&mode=login&redirectTarget=cli");
    expect(buildLoginUrl("http://127.0.0.1:9/prefix/", { challenge: "c", uuid: "u" })).toBe(
      "http://127.0.0.1:9/prefix/loginDeepControl?challenge=c&uuid=u&mode=login&redirectTarget=cli",
    );
  });
});
