/**
 * A number literal too large for a double (`1e400`, which JSON.parse makes Infinity) is a 400 on every HTTP door over a
 * real socket, naming the field and saying the number is out of range, in the door's own error shape: never a
 * confusing "expected number, got a number", and never a value sent on as `null`. No Run reaches the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { HTTP_DOORS, type HttpDoor } from "./doors.js";
import { expectErrorShape } from "./error-shape.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

const BIG = "__BIG__";

/** POSTs `body` with every `"__BIG__"` written as the number literal `literal`. */
async function postWith(door: HttpDoor, body: unknown, literal: string) {
  const response = await fetch(`${stack.server.url}${door.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body).replaceAll(`"${BIG}"`, literal),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The door's output cap: where a client most plausibly writes a huge number. */
const CAP: Record<string, string> = { chat: "max_tokens", messages: "max_tokens", responses: "max_output_tokens" };

describe.each(HTTP_DOORS.map((door) => [door.name, door] as const))("%s door", (_name, door) => {
  const cap = CAP[door.name] as string;

  it(`${cap}: 1e400 → 400 naming it, out of range; no Run`, async () => {
    const runs = stack.emulator.stats().runStreams;
    for (const literal of ["1e400", "-1e400", `1${"0".repeat(400)}`]) {
      const answer = await postWith(door, { ...door.basic("auto"), [cap]: BIG }, literal);
      expect(answer.status, literal).toBe(400);
      expectErrorShape(door, answer.body, {
        type: "invalid_request_error",
        message: new RegExp(`^Invalid value for '${cap}': the number is out of range \\(a JSON number must be`),
        param: cap,
        code: null,
      });
    }
    expect(stack.emulator.stats().runStreams).toBe(runs);
  });

  it("anywhere in the body, e.g. inside message content → named by its path", async () => {
    const { body, field } = door.content(BIG);
    const answer = await postWith(door, body, "1e999");
    expect(answer.status).toBe(400);
    expectErrorShape(door, answer.body, {
      type: "invalid_request_error",
      message: new RegExp(`^Invalid value for '${field.replace(/[[\].]/g, "\\$&")}': the number is out of range`),
      param: field,
    });
  });

  it("the largest double is a number like any other", async () => {
    const { body } = door.content(BIG);
    expect((await postWith(door, body, "1.7976931348623157e308")).status).toBe(200);
  });
});
