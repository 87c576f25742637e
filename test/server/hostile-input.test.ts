/**
 * The same hostile input gets the same well-formed answer on every API door (issue #23): nesting 100 and 10,000 deep
 * in a tool schema, in tool arguments and in content, a 300-character model, an image over the cap, a 21 MiB image
 * (its body is over the limit, so it is refused before it is read), bytes that are no image, and tool arguments in
 * the history that are no JSON object. Each is a 4xx in the door's own error shape naming the field (the 21 MiB
 * body: saying the body is too large), before any Run. A new door joins by adding one entry to DOORS (doors.ts).
 */
import { describe, expect, it } from "vitest";
import { bodyLimitForImages, DEFAULT_MAX_IMAGE_BYTES } from "../../src/surfaces/kit/image-input.js";
import { jpegImage } from "../support/images.js";
import { appWithRecorder, DOORS, type Door, errorOf } from "./doors.js";

const DEEP = "__DEEP__";
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** The body as text, with every {@link DEEP} placeholder (plain or inside a JSON string) replaced by deep arrays. */
function withDepth(body: unknown, depth: number): string {
  return JSON.stringify(body).replaceAll(`\\"${DEEP}\\"`, nested(depth)).replaceAll(`"${DEEP}"`, nested(depth));
}

const app = () => appWithRecorder({ maxBodyBytes: bodyLimitForImages(4 * 1024 * 1024, DEFAULT_MAX_IMAGE_BYTES) });

async function send(door: Door, body: string | object) {
  const { app: server, runs } = app();
  const response = await server.request(door.path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { response, runs };
}

describe.each(DOORS.map((door) => [door.name, door] as const))("%s door", (_name, door) => {
  const places = [
    ["a tool schema", () => door.toolSchema(DEEP)],
    ["tool arguments in the history", () => door.toolArguments({ a: DEEP })],
    ["message content", () => door.content(DEEP)],
  ] as const;

  describe.each(places)("nesting in %s", (_place, build) => {
    it.each([100, 10_000])("%i levels → 400 naming the field, no Run", async (depth) => {
      const { body, field } = build();
      const { response, runs } = await send(door, withDepth(body, depth));
      expect(response.status).toBe(400);
      const error = await errorOf(door, response);
      expect(error.field).toContain(field);
      expect(error.message).toMatch(/nested more than 64 levels/);
      expect(runs).toHaveLength(0);
    });
  });

  it("a foreign Host → 403 in the door's own shape", async () => {
    const { app: server, runs } = app();
    const response = await server.request(door.path, {
      method: "POST",
      headers: { "content-type": "application/json", host: "evil.example" },
      body: JSON.stringify(door.basic("auto")),
    });
    expect(response.status).toBe(403);
    expect((await errorOf(door, response)).message).toContain("evil.example");
    expect(runs).toHaveLength(0);
  });

  it("a 300-character model → 400 naming model", async () => {
    const { response, runs } = await send(door, door.basic("m".repeat(300)));
    expect(response.status).toBe(400);
    const error = await errorOf(door, response);
    expect(error.field).toContain("model");
    expect(error.message).toContain("at most 256 characters");
    expect(runs).toHaveLength(0);
  });

  it("an image over the image cap → 413 naming the part", async () => {
    const bytes = Buffer.alloc(DEFAULT_MAX_IMAGE_BYTES + 1024 * 1024, 7);
    jpegImage(8, 8).copy(bytes);
    const { body, field } = door.image(bytes.toString("base64"), "image/jpeg");
    const { response, runs } = await send(door, body);
    expect(response.status).toBe(413);
    const error = await errorOf(door, response);
    expect(error.field).toContain(field);
    expect(error.message).toContain(`over the limit of ${DEFAULT_MAX_IMAGE_BYTES} bytes`);
    expect(runs).toHaveLength(0);
  });

  it("a 21 MiB image → 413 in the door's shape (its body is over the limit: refused before it is read)", async () => {
    const bytes = Buffer.alloc(21 * 1024 * 1024, 7);
    jpegImage(8, 8).copy(bytes);
    const { body } = door.image(bytes.toString("base64"), "image/jpeg");
    const { response, runs } = await send(door, body);
    expect(response.status).toBe(413);
    const error = await errorOf(door, response);
    expect(error.message).toContain("The request body is larger than");
    expect(runs).toHaveLength(0);
  });

  it("bytes that are no image → 400 naming the part", async () => {
    const { body, field } = door.image(Buffer.from("%PDF-1.7 not an image").toString("base64"), "image/png");
    const { response, runs } = await send(door, body);
    expect(response.status).toBe(400);
    const error = await errorOf(door, response);
    expect(error.field).toContain(field);
    expect(error.message).toContain("not PNG, JPEG, GIF or WebP");
    expect(runs).toHaveLength(0);
  });

  it("a real image declared as another type is sent as what its bytes are", async () => {
    const jpeg = jpegImage(16, 9);
    const { body } = door.image(jpeg.toString("base64"), "image/png");
    const { response, runs } = await send(door, body);
    expect(response.status).toBe(200);
    const images = runs[0]?.messages.flatMap((m) => (m.role === "user" ? (m.images ?? []) : []));
    expect(images?.map((image) => image.mimeType)).toEqual(["image/jpeg"]);
    expect(Buffer.from(images?.[0]?.data ?? []).equals(jpeg)).toBe(true);
  });

  it("tool arguments in the history that are no JSON object → 400 naming the field", async () => {
    const { body, field } = door.badToolArguments();
    const { response, runs } = await send(door, body);
    expect(response.status).toBe(400);
    const error = await errorOf(door, response);
    expect(error.field).toContain(field);
    expect(runs).toHaveLength(0);
  });
});
