import { describe, expect, it } from "vitest";
import {
  base64UrlDecode,
  base64UrlEncode,
  decodeJwtPayload,
  jwtExpiresAtMs,
  readJwtClaims,
  userIdFromSubject,
} from "./jwt.js";

function makeJwt(payload: unknown): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}.c2lnbmF0dXJl`;
}

describe("jwt", () => {
  it("reads exp, sub and email", () => {
    const token = makeJwt({ exp: 1_900_000_000, sub: "auth0|user_01ABC", email: "a@example.com", type: "session" });
    expect(readJwtClaims(token)).toEqual({ exp: 1_900_000_000, sub: "auth0|user_01ABC", email: "a@example.com" });
    expect(jwtExpiresAtMs(token)).toBe(1_900_000_000_000);
  });

  it("ignores claims of the wrong type", () => {
    expect(readJwtClaims(makeJwt({ exp: "soon", sub: 7, email: "" }))).toEqual({});
    expect(jwtExpiresAtMs(makeJwt({ sub: "x" }))).toBeUndefined();
  });

  it.each([
    ["empty", ""],
    ["not a jwt", "cur_abcdef"],
    ["two segments", "a.b"],
    ["bad base64", "a.%%%.c"],
    ["payload not json", `a.${Buffer.from("nope").toString("base64url")}.c`],
    ["payload an array", `a.${Buffer.from("[1]").toString("base64url")}.c`],
    ["payload invalid utf-8", `a.${Buffer.from([0xff, 0xfe]).toString("base64url")}.c`],
  ])("returns undefined for junk (%s) without throwing", (_name, token) => {
    expect(decodeJwtPayload(token)).toBeUndefined();
    expect(readJwtClaims(token)).toBeUndefined();
    expect(jwtExpiresAtMs(token)).toBeUndefined();
  });

  it("returns undefined for non-strings", () => {
    expect(decodeJwtPayload(undefined)).toBeUndefined();
    expect(decodeJwtPayload(42)).toBeUndefined();
  });

  it("round-trips base64url and matches Node's encoder", () => {
    const bytes = new Uint8Array(Array.from({ length: 256 }, (_, i) => i));
    const encoded = base64UrlEncode(bytes);
    expect(encoded).toBe(Buffer.from(bytes).toString("base64url"));
    expect(base64UrlDecode(encoded)).toEqual(bytes);
    expect(base64UrlDecode("YQ==")).toEqual(new Uint8Array([97]));
    expect(base64UrlDecode("Y")).toBeUndefined();
  });

  it("extracts the user id from a subject", () => {
    expect(userIdFromSubject("auth0|user_01ABC")).toBe("user_01ABC");
    expect(userIdFromSubject("google-oauth2|user_9")).toBe("user_9");
    expect(userIdFromSubject("user_plain")).toBe("user_plain");
    expect(userIdFromSubject("auth0|")).toBeUndefined();
    expect(userIdFromSubject(undefined)).toBeUndefined();
  });
});
