/**
 * The same hostile input gets the same well-formed answer on every door (issue #23), the three HTTP doors and ACP:
 * nesting 100 and 10,000 deep in a tool schema, in tool arguments and in content, a 300-character model, an image
 * over the cap, images that go over it together, an image that puts the whole request over the door's size limit
 * (refused before it is read), bytes that are no image, and tool arguments in the history that are no JSON object.
 * Each is a refusal in the door's own wire (a 4xx in its error shape; ACP: a JSON-RPC error) naming the field, before
 * any Run. A case a door has no equivalent of is not run on it: its fixture names the case with the reason
 * (doors.ts `without`), and "the door fixtures" below fail when a door lacks a case without giving one. A new door
 * joins by adding one entry to DOORS.
 */
import { describe, expect, it } from "vitest";
import { bodyLimitForImages, DEFAULT_MAX_IMAGE_BYTES } from "../../src/surfaces/kit/image-input.js";
import { jpegImage } from "../support/images.js";
import { appWithRecorder, type Built, DOORS, type Door, type OptionalCase, send } from "./doors.js";

const DEEP = "__DEEP__";
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** Replaces every {@link DEEP} placeholder (plain or inside a JSON string) in a request's JSON text by deep arrays. */
const withDepth = (depth: number) => (text: string) =>
  text.replaceAll(`\\"${DEEP}\\"`, nested(depth)).replaceAll(`"${DEEP}"`, nested(depth));

const recorder = () => appWithRecorder({ maxBodyBytes: bodyLimitForImages(4 * 1024 * 1024, DEFAULT_MAX_IMAGE_BYTES) });

async function sent(door: Door, body: unknown, options: Parameters<typeof send>[3] = {}) {
  const target = recorder();
  const answer = await send(door, target, body, options);
  return { answer, runs: target.runs };
}

/** An image of `bytes` bytes that starts as a real JPEG (so only its size is wrong), as base64. */
const jpegOf = (bytes: number) => {
  const buffer = Buffer.alloc(bytes, 7);
  jpegImage(8, 8).copy(buffer);
  return buffer.toString("base64");
};

/** What a case built (a case the door does not build never runs). */
function built(request: Built | undefined): Built {
  if (request === undefined) throw new Error("the door builds no request for this case");
  return request;
}

/**
 * `it`, unless the door has no equivalent of the case: then nothing runs, and the fixture's reason for it is checked
 * by "the door fixtures" (a case a door can build always runs).
 */
function itOn(door: Door, optional: OptionalCase | undefined, title: string, body: () => Promise<void>) {
  const reason = optional === undefined ? undefined : door.without[optional];
  if (reason === undefined) it(title, body, 120_000);
}

describe("the door fixtures", () => {
  it.each(DOORS.map((door) => [door.name, door] as const))(
    "%s builds every optional case or says why it has none",
    (_name, door) => {
      const optional = ["toolSchema", "toolArguments", "badToolArguments"] as const;
      for (const name of optional) {
        expect(door[name] === undefined, `${door.name}.${name}`).toBe(door.without[name] !== undefined);
      }
      expect(door.transport === "http", `${door.name}: foreignHost`).toBe(door.without.foreignHost === undefined);
      for (const reason of Object.values(door.without)) expect(reason.length).toBeGreaterThan(20);
    },
  );
});

describe.each(DOORS.map((door) => [door.name, door] as const))("%s door", (_name, door) => {
  const places: ReadonlyArray<readonly [string, OptionalCase | undefined, () => Built | undefined]> = [
    ["a tool schema", "toolSchema", () => door.toolSchema?.(DEEP)],
    ["tool arguments in the history", "toolArguments", () => door.toolArguments?.({ a: DEEP })],
    ["message content", undefined, () => door.content(DEEP)],
  ];

  for (const [place, optional, build] of places) {
    for (const depth of [100, 10_000]) {
      itOn(door, optional, `nesting in ${place}: ${depth} levels → refused naming the field, no Run`, async () => {
        const { body, field } = built(build());
        const { answer, runs } = await sent(door, body, { wire: withDepth(depth) });
        expect(answer.status).toBe(door.refusals.invalid);
        expect(answer.error?.field).toContain(field);
        expect(answer.error?.message).toMatch(/nested more than 64 levels/);
        expect(runs).toHaveLength(0);
      });
    }
  }

  itOn(door, "foreignHost", "a foreign Host → 403 in the door's own shape", async () => {
    const { answer, runs } = await sent(door, door.basic("auto"), { headers: { host: "evil.example" } });
    expect(answer.status).toBe(403);
    expect(answer.error?.message).toContain("evil.example");
    expect(runs).toHaveLength(0);
  });

  it("a 300-character model → refused naming model", async () => {
    const { answer, runs } = await sent(door, door.basic("m".repeat(300)));
    expect(answer.status).toBe(door.refusals.invalid);
    expect(answer.error?.field).toContain("model");
    expect(answer.error?.message).toContain("at most 256 characters");
    expect(runs).toHaveLength(0);
  });

  it("an image over the image cap → refused naming the part", async () => {
    const { body, fields } = door.images([jpegOf(DEFAULT_MAX_IMAGE_BYTES + 1024 * 1024)], "image/jpeg");
    const { answer, runs } = await sent(door, body);
    expect(answer.status).toBe(door.refusals.tooLarge);
    expect(answer.error?.field).toContain(fields[0]);
    expect(answer.error?.message).toContain(`over the limit of ${DEFAULT_MAX_IMAGE_BYTES} bytes`);
    expect(runs).toHaveLength(0);
  }, 120_000);

  it("16 images of 1 MiB: the one that brings them over the cap is refused by name", async () => {
    const { body, fields } = door.images(Array(16).fill(jpegOf(1024 * 1024)), "image/jpeg");
    const { answer, runs } = await sent(door, body);
    expect(answer.status).toBe(door.refusals.tooLarge);
    expect(answer.error?.field).toContain(fields[15]);
    expect(answer.error?.message).toContain(`brings the request's images to ${16 * 1024 * 1024} bytes`);
    expect(runs).toHaveLength(0);
  }, 120_000);

  it("an image that puts the request over the door's size limit → refused before it is read", async () => {
    const { body } = door.images([jpegOf(door.overLimit.imageBytes)], "image/jpeg");
    const { answer, runs } = await sent(door, body);
    expect(answer.status).toBe(door.refusals.bodyTooLarge);
    expect(answer.error?.message).toContain(door.overLimit.message);
    expect(runs).toHaveLength(0);
  }, 120_000);

  it("bytes that are no image → refused naming the part", async () => {
    const { body, fields } = door.images([Buffer.from("%PDF-1.7 not an image").toString("base64")], "image/png");
    const { answer, runs } = await sent(door, body);
    expect(answer.status).toBe(door.refusals.invalid);
    expect(answer.error?.field).toContain(fields[0]);
    expect(answer.error?.message).toContain("not PNG, JPEG, GIF or WebP");
    expect(runs).toHaveLength(0);
  });

  it("a real image declared as another type is sent as what its bytes are", async () => {
    const jpeg = jpegImage(16, 9);
    const { body } = door.images([jpeg.toString("base64")], "image/png");
    const { answer, runs } = await sent(door, body);
    expect(answer).toMatchObject({ ok: true, status: door.transport === "http" ? 200 : 0 });
    const images = runs[0]?.messages.flatMap((m) => (m.role === "user" ? (m.images ?? []) : []));
    expect(images?.map((image) => image.mimeType)).toEqual(["image/jpeg"]);
    expect(Buffer.from(images?.[0]?.data ?? []).equals(jpeg)).toBe(true);
  });

  itOn(
    door,
    "badToolArguments",
    "tool arguments in the history that are no JSON object → refused naming the field",
    async () => {
      const { body, field } = built(door.badToolArguments?.());
      const { answer, runs } = await sent(door, body);
      expect(answer.status).toBe(door.refusals.invalid);
      expect(answer.error?.field).toContain(field);
      expect(runs).toHaveLength(0);
    },
  );
});
