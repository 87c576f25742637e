import { describe, expect, it } from "vitest";
import { gifImage, jpegImage, pngImage, webpImage } from "../../test/support/images.js";
import { imageExtension, sniffImage } from "./image.js";

describe("sniffImage", () => {
  it.each([
    ["png", pngImage(37, 21), "image/png"],
    ["jpeg", jpegImage(640, 480), "image/jpeg"],
    ["gif", gifImage(300, 2), "image/gif"],
    ["webp lossy", webpImage(1000, 999, "VP8 "), "image/webp"],
    ["webp lossless", webpImage(16383, 3, "VP8L"), "image/webp"],
    ["webp extended", webpImage(20000, 7, "VP8X"), "image/webp"],
  ])("reads the format and size of a %s", (_name, bytes, mimeType) => {
    const sniffed = sniffImage(bytes);
    expect(sniffed?.mimeType).toBe(mimeType);
    const sizes: Record<string, [number, number]> = {
      "image/png": [37, 21],
      "image/jpeg": [640, 480],
      "image/gif": [300, 2],
    };
    const expected =
      sizes[mimeType] ??
      ({ VP8: [1000, 999], VP8L: [16383, 3], VP8X: [20000, 7] } as const)[
        bytes.subarray(12, 16).toString("latin1").trim() as "VP8" | "VP8L" | "VP8X"
      ];
    expect([sniffed?.width, sniffed?.height]).toEqual(expected);
  });

  it("finds the JPEG frame after other segments and skips fill bytes", () => {
    const jpeg = jpegImage(12, 34);
    const comment = Buffer.from([0xff, 0xfe, 0x00, 0x05, 0x68, 0x69, 0x21]);
    const withComment = Buffer.concat([jpeg.subarray(0, 2), comment, Buffer.from([0xff]), jpeg.subarray(2)]);
    expect(sniffImage(withComment)).toEqual({ mimeType: "image/jpeg", width: 12, height: 34 });
  });

  it("knows the format but not the size when the header is cut short", () => {
    expect(sniffImage(pngImage(5, 5).subarray(0, 10))).toEqual({
      mimeType: "image/png",
      width: undefined,
      height: undefined,
    });
  });

  it("rejects anything else, whatever it claims to be", () => {
    expect(sniffImage(Buffer.from("not an image"))).toBeUndefined();
    expect(sniffImage(new Uint8Array())).toBeUndefined();
    expect(sniffImage(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"))).toBeUndefined();
  });

  it("names file extensions", () => {
    expect(["image/png", "image/jpeg", "image/gif", "image/webp"].map((m) => imageExtension(m as never))).toEqual([
      "png",
      "jpg",
      "gif",
      "webp",
    ]);
  });
});
