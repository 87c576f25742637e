/**
 * The one image decoder of every API door: a data URL (OpenAI `image_url`, Responses `input_image`) or a base64
 * source (Anthropic `image` blocks) → image bytes for the engine. Only base64 data is accepted (the bridge fetches
 * nothing on a client's behalf); the bytes decide the type (PNG, JPEG, GIF or WebP, whatever the client declares),
 * anything else is a 400 naming the part; the decoded images of one request share a byte budget (default 15 MiB: what fits,
 * with the rest of the turn, in the one 16 MiB message that carries them to Cursor over HTTP/2; Cursor's own clients
 * allow 20 MiB), and the part that goes over it is a 413 naming it.
 */
import { ProxyError } from "../../util/errors.js";
import { type ImageMimeType, sniffImage } from "../../util/image.js";

/** Default total of decoded image bytes accepted in one request. */
export const DEFAULT_MAX_IMAGE_BYTES = 15 * 1024 * 1024;

/** The body limit that lets a request carry `maxImageBytes` of images (base64 is 4/3 of the bytes) on top of text. */
export function bodyLimitForImages(maxBodyBytes: number, maxImageBytes: number): number {
  return maxBodyBytes + Math.ceil(maxImageBytes / 3) * 4;
}

/**
 * Byte strings one of which is in every body that carries an image part, on every door: a chat `image_url` part and a
 * Responses `input_image` (`"image_url"`, `"input_image"`, a `data:image/` URL), an Anthropic `image` block
 * (`"image"`). Looked for only in a body over the size limit, so its 413 mentions images only when it had some.
 */
export const IMAGE_PART_MARKS: readonly string[] = ['"image_url"', '"input_image"', '"image"', "data:image/"];

/** A decoded image. */
export interface DecodedImage {
  mimeType: ImageMimeType;
  data: Uint8Array;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", message, { param });
}

/** Counts decoded bytes across one request and refuses the part that goes over the cap (413). */
export class ImageBudget {
  private used = 0;
  private readonly maxBytes: number;
  /** `maxBytes` unset: {@link DEFAULT_MAX_IMAGE_BYTES}, the one place the default is applied. */
  constructor(maxBytes?: number | undefined) {
    this.maxBytes = maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  }

  /** Decodes the data URL found at `param` (e.g. `messages[1].content[2].image_url.url`). */
  decode(url: string, param: string): DecodedImage {
    if (/^https?:/i.test(url)) {
      throw invalid(
        param,
        `Invalid value for '${param}': only base64 data: URLs are accepted for images (cursor-bridge fetches nothing on a client's behalf); send the image as data:image/png;base64,….`,
      );
    }
    const match = DATA_URL.exec(url);
    if (match === null || !(match[2] ?? "").split(";").includes("base64")) {
      throw invalid(param, `Invalid value for '${param}': expected a base64 data: URL (data:<type>;base64,<data>).`);
    }
    return this.decodeBase64(match[3] ?? "", param);
  }

  /** Decodes the base64 image data found at `param` (e.g. `messages.0.content.1.source.data`). */
  decodeBase64(base64: string, param: string): DecodedImage {
    const payload = base64.replace(/\s+/g, "");
    if (payload === "" || !BASE64.test(payload)) {
      throw invalid(param, `Invalid value for '${param}': the image data is not valid base64.`);
    }
    const size = Math.floor((payload.length * 3) / 4) - (payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0);
    if (this.used + size > this.maxBytes) {
      throw new ProxyError(
        "invalid_request",
        `'${param}' brings the request's images to ${this.used + size} bytes, over the limit of ${this.maxBytes} bytes (--max-image-bytes).`,
        { param, status: 413, detail: "image_too_large" },
      );
    }
    const data = Buffer.from(payload, "base64");
    const sniffed = sniffImage(data);
    if (sniffed === undefined) {
      throw invalid(param, `Invalid value for '${param}': the image is not PNG, JPEG, GIF or WebP.`);
    }
    this.used += data.length;
    return { mimeType: sniffed.mimeType, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
  }
}
