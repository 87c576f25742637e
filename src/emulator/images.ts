/**
 * Image input as the emulator receives it (docs/protocol.md §5.5): `SelectedImage`s in the user message's
 * `selected_context`, checked strictly against their bytes (format, declared MIME type, declared dimension), and
 * images of earlier turns from the received state. `[[emu:describe-image]]` reports what the bytes say.
 */
import type { SelectedImage } from "../gen/agent/v1/selected_context_pb.js";
import { type SniffedImage, sniffImage } from "../util/image.js";
import { badRequest } from "./errors.js";

/** One image the turn received, described from its bytes. */
export interface ReceivedImage extends SniffedImage {
  bytes: number;
}

/** Checks raw image bytes against a declared MIME type; returns what they are or throws the 400 to answer. */
export function checkImageBytes(data: Uint8Array, declaredMime: string, where: string): ReceivedImage {
  if (data.length === 0) throw badRequest(`${where} carries no image data.`);
  const sniffed = sniffImage(data);
  if (sniffed === undefined) throw badRequest(`${where} is not a PNG, JPEG, GIF or WebP image.`);
  if (declaredMime !== sniffed.mimeType) {
    throw badRequest(`${where} declares mime_type "${declaredMime}" but its bytes are ${sniffed.mimeType}.`);
  }
  return { ...sniffed, bytes: data.length };
}

/** Checks the `selected_images` of a user message (data inline, uuid, mime type and dimension matching the bytes). */
export function checkSelectedImages(images: readonly SelectedImage[]): ReceivedImage[] {
  return images.map((image, index) => {
    const where = `selected_images[${index}]`;
    const source = image.dataOrBlobId;
    if (source.case === "blobId" || source.case === "blobIdWithData") {
      throw badRequest(`${where} references a blob; the emulator accepts inline image data (field 8) only.`);
    }
    if (image.uuid === "") throw badRequest(`${where} has no uuid.`);
    const received = checkImageBytes(source.value ?? new Uint8Array(), image.mimeType, where);
    const dimension = image.dimension;
    if (dimension !== undefined && (dimension.width !== received.width || dimension.height !== received.height)) {
      throw badRequest(
        `${where} declares ${dimension.width}x${dimension.height} but its bytes are ${received.width}x${received.height}.`,
      );
    }
    return received;
  });
}

/** One line per image: `Image N: <mime> <width>x<height>, <bytes> bytes` (`?` for a size the header lacks). */
export function describeImages(images: readonly ReceivedImage[]): string {
  if (images.length === 0) return "No images received.";
  return images
    .map(
      (image, i) =>
        `Image ${i + 1}: ${image.mimeType} ${image.width ?? "?"}x${image.height ?? "?"}, ${image.bytes} bytes`,
    )
    .join("\n");
}
