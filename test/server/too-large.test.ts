/**
 * The 413 of a body over the size limit, on every HTTP door over a real socket, declared or streamed: it says the
 * limit and what raises it, in the door's own error shape, and speaks of images only when the body carried image
 * parts (a body of text alone is not told about an image cap it has nothing to do with).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyLimitForImages } from "../../src/surfaces/kit/image-input.js";
import { jpegImage } from "../support/images.js";
import { type Stack, startStack } from "../support/stack.js";
import { HTTP_DOORS, type HttpDoor } from "./doors.js";
import { expectErrorShape } from "./error-shape.js";

const MAX_IMAGE_BYTES = 64 * 1024;
const LIMIT = bodyLimitForImages(16 * 1024, MAX_IMAGE_BYTES);

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ app: { maxImageBytes: MAX_IMAGE_BYTES, maxBodyBytes: LIMIT } });
});
afterAll(async () => {
  await stack?.close();
});

/** POSTs `body` with a declared length, or streamed in 1 KiB chunks (chunked transfer coding). */
async function post(door: HttpDoor, body: unknown, streamed: boolean) {
  const bytes = Buffer.from(JSON.stringify(body));
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 1024)
        controller.enqueue(Uint8Array.from(bytes.subarray(at, at + 1024)));
      controller.close();
    },
  });
  const response = await fetch(`${stack.server.url}${door.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    ...(streamed ? { body: stream, duplex: "half" } : { body: Uint8Array.from(bytes) }),
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const TEXT_ONLY = new RegExp(
  `^${escaped(`The request body is larger than ${LIMIT} bytes, this server's limit; --max-body-bytes raises it.`)}$`,
);
const WITH_IMAGES = new RegExp(
  `^${escaped(
    `The request body is larger than ${LIMIT} bytes, this server's limit: --max-body-bytes plus room for ${MAX_IMAGE_BYTES} bytes ` +
      "of images (--max-image-bytes); a larger image cannot be sent.",
  )}$`,
);

function expect413(door: HttpDoor, answer: { status: number; body: Record<string, unknown> }, message: RegExp) {
  expect(answer.status).toBe(413);
  expectErrorShape(door, answer.body, {
    type: door.shape === "anthropic" ? "request_too_large" : "invalid_request_error",
    message,
    param: null,
    code: "request_too_large",
  });
}

describe.each(HTTP_DOORS.map((door) => [door.name, door] as const))("%s door", (_name, door) => {
  for (const streamed of [false, true]) {
    const how = streamed ? "streamed" : "declared";

    it(`${how}, text only → 413 saying the limit and what raises it, no word of images`, async () => {
      const answer = await post(door, door.basic("auto", "x".repeat(LIMIT)), streamed);
      expect413(door, answer, TEXT_ONLY);
      expect(JSON.stringify(answer.body)).not.toMatch(/image/i);
    });

    it(`${how}, with an image part → 413 naming the image cap as well`, async () => {
      const image = Buffer.concat([jpegImage(8, 8), Buffer.alloc(LIMIT, 7)]).toString("base64");
      const { body } = door.images([image], "image/jpeg");
      expect413(door, await post(door, body, streamed), WITH_IMAGES);
    });
  }
});
