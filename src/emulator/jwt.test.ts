import { describe, expect, it } from "vitest";
import { readJwtClaims } from "../util/jwt.js";
import { createJwtSigner } from "./jwt.js";

describe("createJwtSigner", () => {
  let now = 1_800_000_000_000;
  const signer = createJwtSigner("secret", () => now);

  it("signs HS256 tokens with Cursor-shaped claims and verifies them", () => {
    const token = signer.sign({ userId: "user_1", email: "a@b.c" }, "session", 60);
    expect(token.split(".")[0]).toBe("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
    expect(readJwtClaims(token)).toEqual({ exp: now / 1000 + 60, sub: "auth0|user_1", email: "a@b.c" });
    expect(signer.verify(token)).toEqual({
      ok: true,
      claims: { userId: "user_1", email: "a@b.c", kind: "session", exp: now / 1000 + 60 },
    });
  });

  it("rejects expired, tampered and foreign tokens", () => {
    const token = signer.sign({ userId: "user_1" }, "refresh", 60);
    now += 61_000;
    expect(signer.verify(token)).toEqual({ ok: false, reason: "expired" });
    const [h, p, s] = token.split(".");
    expect(signer.verify(`${h}.${p}x.${s}`)).toEqual({ ok: false, reason: "invalid" });
    expect(createJwtSigner("other", () => now).verify(signer.sign({ userId: "u" }, "session", 60))).toEqual({
      ok: false,
      reason: "invalid",
    });
    expect(signer.verify("garbage")).toEqual({ ok: false, reason: "invalid" });
  });
});
