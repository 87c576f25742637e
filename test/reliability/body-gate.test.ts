/**
 * Large bodies never hold other requests for long. The large-body gate admits by bytes, first come first served, but
 * no request waits longer than LARGE_BODY_MAX_WAIT_MS (2 s) because of another, and a body under half the budget
 * never waits for larger ones (its own lane), however many of them hold theirs; and a body over the limit (a 28 MB
 * image request, over the 15 MiB image cap) is refused: read to its end, nothing kept, and it holds nothing. Each case compares
 * a 2 MB request's time behind the big one with its time alone.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LARGE_BODY_MAX_WAIT_MS } from "../../src/server/body-gate.js";
import { bodyLimitForImages, DEFAULT_MAX_IMAGE_BYTES } from "../../src/surfaces/kit/image-input.js";
import { pngImage } from "../support/images.js";
import { type Stack, startStack } from "../support/stack.js";

const MIB = 1024 * 1024;
/** Scheduling noise on a loaded machine, on top of the bound. */
const SLACK_MS = 1_000;

function imageRequest(imageBytes: number, text: string): string {
  const png = pngImage(2, 2);
  const url = `data:image/png;base64,${Buffer.concat([png, Buffer.alloc(imageBytes - png.length)]).toString("base64")}`;
  return JSON.stringify({
    model: "auto",
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text },
          { type: "image_url", image_url: { url } },
        ],
      },
    ],
  });
}

describe("the large-body gate", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      app: {
        maxImageBytes: DEFAULT_MAX_IMAGE_BYTES,
        maxBodyBytes: bodyLimitForImages(4 * MIB, DEFAULT_MAX_IMAGE_BYTES),
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const post = (body: string) =>
    new Promise<{ status: number; ms: number }>((resolve, reject) => {
      const started = performance.now();
      const outgoing = request(
        `${stack.baseURL}/chat/completions`,
        {
          method: "POST",
          agent: false,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
        },
      );
      outgoing.on("error", reject);
      outgoing.end(body);
    });

  const small = imageRequest(1.5 * MIB, "small one [[emu:describe-image]]");
  let alone = 0;
  beforeAll(async () => {
    await post(small);
    alone = (await post(small)).ms;
  });

  it("a request behind a long turn with a large body waits at most the bound", async () => {
    // 14 MiB of image (about 19 MB of body), and a reply that takes about 8 s: it holds the whole budget.
    const big = post(imageRequest(14 * MIB, "big one [[emu:tokens 40]] [[emu:rate 5]]"));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const behind = await post(small);
    const bigAnswer = await big;
    process.stdout.write(
      `reliability: body gate: 2 MB request alone ${alone.toFixed(0)} ms, behind a 19 MB body's 8 s turn ${behind.ms.toFixed(0)} ms (big: ${bigAnswer.status} in ${bigAnswer.ms.toFixed(0)} ms)\n`,
    );
    expect(behind.status).toBe(200);
    expect(bigAnswer.status).toBe(200);
    expect(behind.ms).toBeLessThan(alone + LARGE_BODY_MAX_WAIT_MS + SLACK_MS);
  }, 60_000);

  it("a 2 MB request behind two concurrent long turns with 19 MB bodies is admitted within the bound", async () => {
    // Both hold the large bodies' lane (one in its budget, one over it after 2 s); the 2 MB one is in the other lane.
    const turn = "[[emu:tokens 40]] [[emu:rate 5]]";
    const bigs = [post(imageRequest(14 * MIB, `big one ${turn}`)), post(imageRequest(14 * MIB, `big two ${turn}`))];
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const behind = await post(small);
    const answers = await Promise.all(bigs);
    process.stdout.write(
      `reliability: body gate: 2 MB request alone ${alone.toFixed(0)} ms, behind two 19 MB bodies' 8 s turns ${behind.ms.toFixed(0)} ms (big: ${answers.map((a) => `${a.status} in ${a.ms.toFixed(0)} ms`).join(", ")})\n`,
    );
    expect(behind.status).toBe(200);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(behind.ms).toBeLessThan(alone + LARGE_BODY_MAX_WAIT_MS + SLACK_MS);
  }, 60_000);

  it("a request behind a 28 MB body waits at most the bound (the 28 MB body is refused, nothing kept)", async () => {
    const body = imageRequest(20 * MIB, "too big").padEnd(28_000_000, " ");
    const big = post(body);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const behind = await post(small);
    const bigAnswer = await big;
    process.stdout.write(
      `reliability: body gate: 2 MB request behind a 28 MB body ${behind.ms.toFixed(0)} ms (28 MB: ${bigAnswer.status} in ${bigAnswer.ms.toFixed(0)} ms)\n`,
    );
    expect(bigAnswer.status).toBe(413);
    expect(behind.status).toBe(200);
    expect(behind.ms).toBeLessThan(alone + LARGE_BODY_MAX_WAIT_MS + SLACK_MS);
  }, 60_000);
});
