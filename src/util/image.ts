/**
 * Image byte sniffing: which of the formats Cursor accepts (PNG, JPEG, GIF, WebP) a buffer holds, and its pixel
 * size read from the header. Pure and dependency-free, so API surfaces, the backend and the emulator can share it.
 * The declared type of an upload is never trusted; these bytes decide.
 */

/** MIME types of the accepted image formats. */
export const IMAGE_MIME_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
/** One accepted MIME type. */
export type ImageMimeType = (typeof IMAGE_MIME_TYPES)[number];

/** What the bytes say. `width`/`height` are undefined when the header is cut short before the size. */
export interface SniffedImage {
  mimeType: ImageMimeType;
  width: number | undefined;
  height: number | undefined;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((byte, i) => bytes[at + i] === byte);
}

function ascii(bytes: Uint8Array, at: number, length: number): string {
  if (bytes.length < at + length) return "";
  return String.fromCharCode(...bytes.subarray(at, at + length));
}

function u16be(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) << 8) | (bytes[at + 1] as number);
}

function u16le(bytes: Uint8Array, at: number): number {
  return (bytes[at] as number) | ((bytes[at + 1] as number) << 8);
}

function u24le(bytes: Uint8Array, at: number): number {
  return u16le(bytes, at) | ((bytes[at + 2] as number) << 16);
}

function u32be(bytes: Uint8Array, at: number): number {
  return (((bytes[at] as number) << 24) >>> 0) + u16be(bytes, at + 1) * 256 + (bytes[at + 3] as number);
}

function sized(mimeType: ImageMimeType, size: [number, number] | undefined): SniffedImage {
  return { mimeType, width: size?.[0], height: size?.[1] };
}

/** PNG: IHDR is the first chunk; width and height are big-endian at 16 and 20. */
function pngSize(bytes: Uint8Array): [number, number] | undefined {
  if (bytes.length < 24 || ascii(bytes, 12, 4) !== "IHDR") return undefined;
  return [u32be(bytes, 16), u32be(bytes, 20)];
}

/** GIF: logical screen width and height, little-endian at 6 and 8. */
function gifSize(bytes: Uint8Array): [number, number] | undefined {
  return bytes.length < 10 ? undefined : [u16le(bytes, 6), u16le(bytes, 8)];
}

/** JPEG: walk the marker segments to the first start-of-frame (SOF0-SOF15 except DHT, JPG, DAC). */
function jpegSize(bytes: Uint8Array): [number, number] | undefined {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] as number;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    const length = u16be(bytes, at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return at + 9 <= bytes.length ? [u16be(bytes, at + 7), u16be(bytes, at + 5)] : undefined;
    if (length < 2) return undefined;
    at += 2 + length;
  }
  return undefined;
}

/** WebP: the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webpSize(bytes: Uint8Array): [number, number] | undefined {
  const chunk = ascii(bytes, 12, 4);
  if (chunk === "VP8 " && bytes.length >= 30) {
    return [u16le(bytes, 26) & 0x3fff, u16le(bytes, 28) & 0x3fff];
  }
  if (chunk === "VP8L" && bytes.length >= 25) {
    const b = (i: number) => bytes[21 + i] as number;
    const width = 1 + (b(0) | ((b(1) & 0x3f) << 8));
    const height = 1 + ((b(1) >> 6) | (b(2) << 2) | ((b(3) & 0x0f) << 10));
    return [width, height];
  }
  if (chunk === "VP8X" && bytes.length >= 30) return [1 + u24le(bytes, 24), 1 + u24le(bytes, 27)];
  return undefined;
}

/** The image format and size of `bytes`, or undefined when they are not PNG, JPEG, GIF or WebP. */
export function sniffImage(bytes: Uint8Array): SniffedImage | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return sized("image/png", pngSize(bytes));
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return sized("image/jpeg", jpegSize(bytes));
  const head = ascii(bytes, 0, 6);
  if (head === "GIF87a" || head === "GIF89a") return sized("image/gif", gifSize(bytes));
  if (ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return sized("image/webp", webpSize(bytes));
  return undefined;
}

/** File extension for a sniffed MIME type (`png`, `jpg`, `gif`, `webp`). */
export function imageExtension(mimeType: ImageMimeType): string {
  return mimeType === "image/jpeg" ? "jpg" : mimeType.slice("image/".length);
}
