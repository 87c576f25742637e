/**
 * What the agent reads from ACP's requests before anything runs (the SDK's schemas have checked their shape): a
 * prompt's content blocks as the engine's user message (text as is, images through the kit's image budget: decoded
 * and sniffed, the bytes must be PNG, JPEG, GIF or WebP; resource links as a mention of the resource, embedded text
 * resources inlined with their URI; audio refused, as initialize says `audio: false`), a session's title from its
 * first prompt, and the params of the unstable methods and the agent's own stand-in, which the SDK leaves to it.
 */
import { isAbsolute } from "node:path";
import { type ContentBlock, type McpServer, RequestError } from "@agentclientprotocol/sdk";
import type { MessagePart } from "../../engine/index.js";
import { ImageBudget } from "../kit/image-input.js";
import { assertJsonDepth } from "../kit/json-limits.js";
import { toRequestError } from "./errors.js";
import { TOO_LARGE_METHOD, type TooLargeParams } from "./line-limit.js";
import type { ForkParams, SetModelParams, SetTitleParams } from "./wire.js";

/**
 * Refuses `session/prompt` params nested more than the kit's 64 levels anywhere (the params are level 1, as an HTTP
 * door's body is), as an invalid-params error naming the field, before anything reads or keeps the prompt: the
 * session's transcript keeps its blocks, `_meta` included, and copying 10,000 levels overflows the stack.
 */
export function checkPromptDepth(params: unknown): void {
  try {
    assertJsonDepth(params, () => []);
  } catch (error) {
    throw toRequestError(error);
  }
}

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

/** `session/fork` params (ACP's unstable schema): the source session, the fork's folder and MCP servers. */
export function parseFork(raw: unknown): ForkParams {
  const value = (raw ?? {}) as { sessionId?: unknown; cwd?: unknown; mcpServers?: unknown };
  if (typeof value.sessionId !== "string" || typeof value.cwd !== "string" || !isAbsolute(value.cwd)) {
    throw RequestError.invalidParams(undefined, "session/fork needs sessionId and an absolute cwd.");
  }
  if (value.mcpServers !== undefined && !Array.isArray(value.mcpServers)) {
    throw RequestError.invalidParams(undefined, "mcpServers must be an array.");
  }
  return {
    sessionId: value.sessionId,
    cwd: value.cwd,
    ...(value.mcpServers === undefined ? {} : { mcpServers: value.mcpServers as McpServer[] }),
  };
}

/**
 * The line limit's stand-in request (line-limit.ts). An editor can send the method itself: params that are not the
 * stand-in's get an invalid-params error instead of a crash of the handler.
 */
export function parseTooLarge(raw: unknown): TooLargeParams {
  const value = (raw ?? {}) as { bytes?: unknown; limit?: unknown };
  if (typeof value.limit !== "number" || typeof value.bytes !== "number") {
    throw RequestError.invalidParams(undefined, `${TOO_LARGE_METHOD} is the agent's own stand-in for a line too long.`);
  }
  return { bytes: value.bytes, limit: value.limit };
}

/** `session/set_title` params (ACP's unstable schema). */
export function parseSetTitle(raw: unknown): SetTitleParams {
  const value = (raw ?? {}) as { sessionId?: unknown; title?: unknown };
  if (typeof value.sessionId !== "string" || typeof value.title !== "string") {
    throw RequestError.invalidParams(undefined, "session/set_title needs sessionId and title.");
  }
  return { sessionId: value.sessionId, title: value.title.slice(0, 200) };
}

/** `session/set_model` params (ACP's older unstable schema): the model is checked as the model option checks it. */
export function parseSetModel(raw: unknown): SetModelParams {
  const value = (raw ?? {}) as { sessionId?: unknown; modelId?: unknown };
  if (typeof value.sessionId !== "string" || typeof value.modelId !== "string") {
    throw RequestError.invalidParams(undefined, "session/set_model needs sessionId and modelId.");
  }
  return { sessionId: value.sessionId, modelId: value.modelId };
}
