/**
 * Image input end to end: OpenAI `image_url` data: URLs from the openai SDK and `{type:"image"}` parts
 * from the AI SDK reach the emulator as SelectedImage bytes, which `[[emu:describe-image]]` reads back; the limits
 * (data: URLs only, `image_url` an object as OpenAI requires, the per-request image cap, models without image input)
 * are clear 4xx errors.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyLimitForImages } from "../../src/surfaces/kit/image-input.js";
import { gifImage, jpegImage, pngImage } from "../support/images.js";
import { type Stack, startStack } from "../support/stack.js";
import { HTTP_DOORS, type HttpDoor } from "./doors.js";
import { expectErrorShape } from "./error-shape.js";

const MAX_IMAGE_BYTES = 64 * 1024;
const CHAT = HTTP_DOORS.find((door) => door.name === "chat") as HttpDoor;
let stack: Stack;
let client: OpenAI;

beforeAll(async () => {
  stack = await startStack({
    app: { maxImageBytes: MAX_IMAGE_BYTES, maxBodyBytes: bodyLimitForImages(16 * 1024, MAX_IMAGE_BYTES) },
  });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
});
afterAll(async () => stack.close());

const dataUrl = (bytes: Buffer, declared = "image/png") => `data:${declared};base64,${bytes.toString("base64")}`;

describe("openai SDK image_url parts", () => {
  it("reach Cursor as the same bytes, typed by the bytes, not the declared type", async () => {
    const png = pngImage(40, 30);
    const jpeg = jpegImage(800, 600);
    const completion = await client.chat.completions.create({
      model: "auto",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What do you see? [[emu:describe-image]]" },
            { type: "image_url", image_url: { url: dataUrl(png) } },
            { type: "image_url", image_url: { url: dataUrl(jpeg, "image/png"), detail: "high" } },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe(
      `Image 1: image/png 40x30, ${png.length} bytes\nImage 2: image/jpeg 800x600, ${jpeg.length} bytes`,
    );
  });

  it("carries the images of earlier turns when the history is rebuilt", async () => {
    const gif = gifImage(7, 5);
    const completion = await client.chat.completions.create({
      model: "claude-4.6-opus-high",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: dataUrl(gif) } },
          ],
        },
        { role: "assistant", content: "A small GIF." },
        { role: "user", content: "And now? [[emu:describe-image]]" },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe(`Image 1: image/gif 7x5, ${gif.length} bytes`);
  });

  const failure = async (messages: OpenAI.Chat.ChatCompletionMessageParam[], model = "auto") => {
    try {
      await client.chat.completions.create({ model, messages });
    } catch (error) {
      if (error instanceof OpenAI.APIError) return error;
      throw error;
    }
    throw new Error("expected an error");
  };

  it("refuses http(s) image URLs: only data: URLs, nothing is fetched", async () => {
    const error = await failure([
      { role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] },
    ]);
    expect(error.status).toBe(400);
    expect(error.param).toBe("messages[0].content[0].image_url.url");
    expect(error.message).toMatch(/only base64 data: URLs are accepted/);
  });

  it("refuses image_url given as a string (OpenAI requires {url}) naming the part, before any Run", async () => {
    const runs = stack.emulator.stats().runStreams;
    for (const imageUrl of ["https://example.com/cat.png", dataUrl(pngImage(2, 2))]) {
      const response = await fetch(`${stack.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "auto",
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "x" },
                { type: "image_url", image_url: imageUrl },
              ],
            },
          ],
        }),
      });
      expect(response.status).toBe(400);
      expectErrorShape(CHAT, (await response.json()) as Record<string, unknown>, {
        type: "invalid_request_error",
        message: /^Invalid type for 'messages\[0\]\.content\[1\]\.image_url': expected object, but got a string\.$/,
        param: "messages[0].content[1].image_url",
        code: null,
      });
    }
    expect(stack.emulator.stats().runStreams).toBe(runs);
  });

  it("refuses bytes that are not an image", async () => {
    const error = await failure([
      { role: "user", content: [{ type: "image_url", image_url: { url: dataUrl(Buffer.from("<svg/>")) } }] },
    ]);
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/not PNG, JPEG, GIF or WebP/);
  });

  it("answers 413 naming the part that goes over the per-request image cap", async () => {
    // Each image just over half the cap (a PNG header followed by padding): the body still fits, the images do not.
    const half = Buffer.concat([pngImage(4, 4), Buffer.alloc(MAX_IMAGE_BYTES / 2)]);
    expect(half.length).toBeGreaterThan(MAX_IMAGE_BYTES / 2);
    const error = await failure([
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: dataUrl(half) } },
          { type: "text", text: "two" },
          { type: "image_url", image_url: { url: dataUrl(half) } },
        ],
      },
    ]);
    expect(error.status).toBe(413);
    expect(error.message).toContain("'messages[0].content[2].image_url.url' brings the request's images to");
    expect(error.message).toContain(`over the limit of ${MAX_IMAGE_BYTES} bytes`);
  });

  it("answers 400 naming the model when it does not accept images", async () => {
    const error = await failure(
      [{ role: "user", content: [{ type: "image_url", image_url: { url: dataUrl(pngImage(2, 2)) } }] }],
      "grok-code-fast-1",
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe("model");
    expect(error.message).toContain("The model `grok-code-fast-1` does not accept image input.");
  });
});

describe("AI SDK image parts", () => {
  it("sends { type: 'image', image: <bytes> } through to Cursor intact", async () => {
    const provider = createOpenAICompatible({ name: "cursor-bridge", baseURL: stack.baseURL, apiKey: "local" });
    const png = pngImage(16, 9);
    const result = await generateText({
      model: provider("gpt-5.2"),
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "[[emu:describe-image]]" },
            { type: "image", image: new Uint8Array(png), mediaType: "image/png" },
          ],
        },
      ],
    });
    expect(result.text).toBe(`Image 1: image/png 16x9, ${png.length} bytes`);
  });
});
