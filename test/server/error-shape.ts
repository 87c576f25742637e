/** The exact error body of an HTTP door, for tests that check a refusal's shape as well as its words. */
import { expect } from "vitest";
import type { HttpDoor } from "./doors.js";

/** The door's error shape, exactly: OpenAI `{error:{message,type,param,code}}`, Anthropic `{type,error:{type,message}}`. */
export function expectErrorShape(
  door: HttpDoor,
  body: Record<string, unknown>,
  expected: { type: string; message: RegExp; param?: string | null; code?: string | null },
): void {
  if (door.shape === "anthropic") {
    expect(Object.keys(body).sort()).toEqual(["error", "type"]);
    expect(body.type).toBe("error");
    const error = body.error as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(["message", "type"]);
    expect(error.type).toBe(expected.type);
    expect(error.message).toMatch(expected.message);
    return;
  }
  expect(Object.keys(body)).toEqual(["error"]);
  const error = body.error as Record<string, unknown>;
  expect(Object.keys(error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(error.type).toBe(expected.type);
  expect(error.message).toMatch(expected.message);
  if (expected.param !== undefined) expect(error.param).toBe(expected.param);
  if (expected.code !== undefined) expect(error.code).toBe(expected.code);
}
