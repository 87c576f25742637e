/**
 * What the bytes of a request body may be, on every HTTP door over a real socket: UTF-8 only (bytes that are not are a
 * 400, never replaced with U+FFFD and sent on) and uncompressed (a `Content-Encoding` other than `identity` is a 415
 * before the body is read). Each refusal is in the door's own error shape, and no Run reaches the emulator.
 */
import { gzipSync } from "node:zlib";
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

/** POSTs raw bytes to the door over the stack's socket. */
async function postBytes(door: HttpDoor, body: Buffer | string, headers: Record<string, string> = {}) {
  const response = await fetch(`${stack.server.url}${door.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
    body: typeof body === "string" ? body : Uint8Array.from(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.each(HTTP_DOORS.map((door) => [door.name, door] as const))("%s door", (_name, door) => {
  it("a body that is not UTF-8 → 400 in the door's shape, no Run", async () => {
    const text = JSON.stringify(door.basic("auto", "h__BAD__i"));
    const [before, after] = text.split("__BAD__") as [string, string];
    const bytes = Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe]), Buffer.from(after)]);
    const runs = stack.emulator.stats().runStreams;
    const answer = await postBytes(door, bytes);
    expect(answer.status).toBe(400);
    expectErrorShape(door, answer.body, {
      type: "invalid_request_error",
      message: /^The request body is not valid UTF-8; send JSON encoded as UTF-8/,
      param: "body",
      code: null,
    });
    // A truncated multi-byte character is refused as well.
    const cut = Buffer.concat([Buffer.from(before), Buffer.from("é").subarray(0, 1), Buffer.from(after)]);
    expect((await postBytes(door, cut)).status).toBe(400);
    expect(stack.emulator.stats().runStreams).toBe(runs);
  });

  it("UTF-8 text (multi-byte characters, a byte order mark) goes through unchanged", async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(JSON.stringify(door.basic("auto", "héllo ✓ 𝄞"))),
    ]);
    const answer = await postBytes(door, bytes);
    expect(answer.status).toBe(200);
    expect(JSON.stringify(answer.body)).toContain("héllo ✓ 𝄞");
  });

  it("Content-Encoding: gzip → 415 in the door's shape, naming the encoding, no Run", async () => {
    const runs = stack.emulator.stats().runStreams;
    for (const encoding of ["gzip", "GZIP", "br", "identity, deflate"]) {
      const answer = await postBytes(door, gzipSync(JSON.stringify(door.basic("auto"))), {
        "content-encoding": encoding,
      });
      expect(answer.status, encoding).toBe(415);
      const named = encoding.replace("identity, ", "").toLowerCase();
      expectErrorShape(door, answer.body, {
        type: "invalid_request_error",
        message: new RegExp(`^Content-Encoding ${named} is not supported; send the body uncompressed\\.$`),
        param: "content-encoding",
        code: "unsupported_media_type",
      });
    }
    expect(stack.emulator.stats().runStreams).toBe(runs);
  });

  it("Content-Encoding: identity is the body as it is", async () => {
    const answer = await postBytes(door, JSON.stringify(door.basic("auto")), { "content-encoding": "identity" });
    expect(answer.status).toBe(200);
  });
});
