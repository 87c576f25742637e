/**
 * Image input at the emulator (docs/protocol.md §5.5): `SelectedImage`s are checked against their bytes and
 * `[[emu:describe-image]]` reports what the bytes say, for the new message and for earlier turns.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import type { SelectedImageSchema } from "../../src/gen/agent/v1/selected_context_pb.js";
import { gifImage, jpegImage, pngImage, webpImage } from "../support/images.js";
import { agentClient, BlobStore, driveRun, runRequest } from "./support/raw-client.js";

let emulator: Emulator;
let client: ReturnType<typeof agentClient>;

beforeAll(async () => {
  emulator = await startEmulator();
  client = agentClient(emulator.url, emulator.issueTokens().accessToken);
});
afterAll(async () => {
  await emulator.close();
});

type ImageInit = MessageInitShape<typeof SelectedImageSchema>;

function selected(data: Buffer, mimeType: string, extra: Partial<ImageInit> = {}): ImageInit {
  return { dataOrBlobId: { case: "data", value: data }, uuid: crypto.randomUUID(), path: "x", mimeType, ...extra };
}

describe("[[emu:describe-image]]", () => {
  it("describes each received image from its bytes, one line each", async () => {
    const png = pngImage(37, 21);
    const jpeg = jpegImage(640, 480);
    const webp = webpImage(100, 50, "VP8X");
    const result = await driveRun(
      client,
      runRequest("what is this? [[emu:describe-image]]", {
        images: [
          selected(png, "image/png", { dimension: { width: 37, height: 21 } }),
          selected(jpeg, "image/jpeg"),
          selected(webp, "image/webp"),
        ],
      }),
      new BlobStore(),
    );
    expect(result.error).toBeUndefined();
    expect(result.text).toBe(
      [
        `Image 1: image/png 37x21, ${png.length} bytes`,
        `Image 2: image/jpeg 640x480, ${jpeg.length} bytes`,
        `Image 3: image/webp 100x50, ${webp.length} bytes`,
      ].join("\n"),
    );
  });

  it("says so when no image arrived", async () => {
    const result = await driveRun(client, runRequest("[[emu:describe-image]]"), new BlobStore());
    expect(result.text).toBe("No images received.");
  });

  it("lists the images of earlier turns too, from the checkpointed state", async () => {
    const store = new BlobStore();
    const gif = gifImage(8, 9);
    const first = await driveRun(client, runRequest("look", { images: [selected(gif, "image/gif")] }), store);
    expect(first.checkpoint).toBeDefined();
    const png = pngImage(2, 3);
    const second = await driveRun(
      client,
      runRequest("[[emu:describe-image]]", { state: first.checkpoint, images: [selected(png, "image/png")] }),
      store,
    );
    expect(second.text).toBe(
      `Image 1: image/gif 8x9, ${gif.length} bytes\nImage 2: image/png 2x3, ${png.length} bytes`,
    );
  });

  it("reads image parts of root prompt messages (a rebuilt history)", async () => {
    const store = new BlobStore();
    const png = pngImage(4, 4);
    const root = store.putJson({
      role: "user",
      content: [
        { type: "text", text: "earlier" },
        { type: "image", image: png.toString("base64"), mediaType: "image/png" },
      ],
    });
    const result = await driveRun(
      client,
      runRequest("[[emu:describe-image]]", { state: { rootPromptMessagesJson: [root] } as never }),
      store,
    );
    expect(result.text).toBe(`Image 1: image/png 4x4, ${png.length} bytes`);
  });
});

describe("strict image checks", () => {
  it.each([
    [
      "a declared type the bytes contradict",
      selected(pngImage(1, 1), "image/jpeg"),
      /declares mime_type "image\/jpeg"/,
    ],
    ["bytes that are no image", selected(Buffer.from("<svg/>"), "image/svg+xml"), /not a PNG, JPEG, GIF or WebP/],
    [
      "a wrong dimension",
      selected(pngImage(5, 6), "image/png", { dimension: { width: 6, height: 5 } }),
      /declares 6x5/,
    ],
    ["no data", selected(Buffer.alloc(0), "image/png"), /no image data/],
    ["no uuid", selected(pngImage(1, 1), "image/png", { uuid: "" }), /no uuid/],
    [
      "a blob reference",
      { ...selected(pngImage(1, 1), "image/png"), dataOrBlobId: { case: "blobId", value: new Uint8Array(32) } },
      /inline image data/,
    ],
  ])("rejects %s", async (_name, image, message) => {
    const result = await driveRun(client, runRequest("hi", { images: [image as ImageInit] }), new BlobStore());
    expect(result.error?.code).toBe(Code.InvalidArgument);
    expect(result.error?.rawMessage).toMatch(message);
  });

  it("rejects images for a model without image input", async () => {
    const image = selected(pngImage(1, 1), "image/png");
    const result = await driveRun(
      client,
      runRequest("hi", { images: [image], model: "grok-code-fast-1" }),
      new BlobStore(),
    );
    expect(result.error?.code).toBe(Code.InvalidArgument);
    expect(result.error?.rawMessage).toBe('Model "grok-code-fast-1" does not accept image input.');
  });
});
