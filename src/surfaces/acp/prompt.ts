/**
 * An ACP prompt (content blocks) as the engine's user message: text as is, images decoded (and sniffed: the bytes
 * must be PNG, JPEG, GIF or WebP), resource links as a mention of the resource, embedded text resources inlined
 * with their URI. Audio is refused (initialize says `audio: false`).
 */
import { type ContentBlock, RequestError } from "@agentclientprotocol/sdk";
import type { MessagePart } from "../../engine/index.js";
import { ImageBudget } from "../kit/image-input.js";
import { toRequestError } from "./errors.js";

/**
 * Most bytes of a prompt (its text in UTF-8 plus its decoded images): a turn reaches Cursor in one message of at most
 * 16 MiB over HTTP/2, as the HTTP doors' image budget says.
 */
export const MAX_PROMPT_BYTES = 15 * 1024 * 1024;

/**
 * The user message parts of a prompt. Throws an `invalid_params` RequestError for content it cannot take. Images pass
 * the HTTP doors' budget (kit/image-input.ts: PNG, JPEG, GIF or WebP by their bytes, `maxImageBytes` in total).
 */
export function promptParts(blocks: readonly ContentBlock[], maxImageBytes?: number): MessagePart[] {
  let parts: MessagePart[];
  try {
    parts = partsOf(blocks, new ImageBudget(maxImageBytes));
  } catch (error) {
    throw toRequestError(error);
  }
  const bytes = parts.reduce(
    (sum, part) => sum + (part.type === "text" ? Buffer.byteLength(part.text) : part.data.byteLength),
    0,
  );
  if (bytes > MAX_PROMPT_BYTES) {
    throw RequestError.invalidParams(
      { bytes, limit: MAX_PROMPT_BYTES },
      `The prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} bytes (15 MiB of text and images: a turn reaches Cursor in one message).`,
    );
  }
  return parts;
}

function partsOf(blocks: readonly ContentBlock[], images: ImageBudget): MessagePart[] {
  const parts: MessagePart[] = [];
  const text = (value: string) => parts.push({ type: "text", text: value });
  for (const [index, block] of blocks.entries()) {
    switch (block.type) {
      case "text":
        text(block.text);
        break;
      case "image": {
        const { mimeType, data } = images.decodeBase64(block.data, `prompt[${index}].data`);
        parts.push({ type: "image", mimeType, data });
        break;
      }
      case "resource_link":
        text(`[@${block.name}](${block.uri})`);
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) text(`<context uri="${resource.uri}">\n${resource.text}\n</context>`);
        else text(`[@${resource.uri}] (binary resource, ${resource.mimeType ?? "unknown type"})`);
        break;
      }
      case "audio":
        throw RequestError.invalidParams(undefined, "cursor-bridge does not take audio prompts.");
    }
  }
  if (parts.length === 0) throw RequestError.invalidParams(undefined, "The prompt is empty.");
  return parts;
}

/** Most characters of a title derived from a prompt. */
export const TITLE_LENGTH = 80;

/** A session title from its first prompt: the first non-empty line of its text, shortened; undefined without text. */
export function titleOf(blocks: readonly ContentBlock[]): string | undefined {
  for (const block of blocks) {
    if (block.type !== "text") continue;
    const line = block.text
      .split(/\r?\n/)
      .map((l) => l.replace(/\s+/g, " ").trim())
      .find((l) => l !== "");
    if (line === undefined) continue;
    return line.length <= TITLE_LENGTH ? line : `${line.slice(0, TITLE_LENGTH - 1).trimEnd()}…`;
  }
  return undefined;
}
