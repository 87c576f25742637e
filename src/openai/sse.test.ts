import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { encodeSseData, encodeSseError, SSE_DONE, toSseStream } from "./sse.js";

async function collect(source: AsyncIterable<string>): Promise<string> {
  let out = "";
  for await (const frame of source) out += frame;
  return out;
}

describe("SSE encoding", () => {
  it("encodes one data frame per value, JSON on a single line", () => {
    expect(encodeSseData({ a: "x\ny" })).toBe('data: {"a":"x\\ny"}\n\n');
    expect(SSE_DONE).toBe("data: [DONE]\n\n");
  });

  it("encodes errors as the OpenAI error body", () => {
    const frame = encodeSseError(new ProxyError("rate_limited", "slow down"));
    expect(frame).toBe(
      'data: {"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}\n\n',
    );
  });
});

describe("toSseStream", () => {
  it("ends a successful stream with [DONE]", async () => {
    async function* chunks() {
      yield { n: 1 };
      yield { n: 2 };
    }
    expect(await collect(toSseStream(chunks()))).toBe(`data: {"n":1}\n\ndata: {"n":2}\n\n${SSE_DONE}`);
  });

  it("replaces [DONE] with one error frame when the source throws, and reports the error", async () => {
    const failure = new ProxyError("backend_unavailable", "upstream went away");
    async function* chunks() {
      yield { n: 1 };
      throw failure;
    }
    const seen: unknown[] = [];
    const out = await collect(toSseStream(chunks(), { onError: (error) => seen.push(error) }));
    expect(out).toBe(`data: {"n":1}\n\n${encodeSseError(failure)}`);
    expect(out).not.toContain("[DONE]");
    expect(seen).toEqual([failure]);
  });

  it("calls the source's return() when the consumer stops early", async () => {
    let released = false;
    async function* chunks() {
      try {
        for (let n = 0; ; n++) yield { n };
      } finally {
        released = true;
      }
    }
    for await (const frame of toSseStream(chunks())) {
      expect(frame).toBe('data: {"n":0}\n\n');
      break;
    }
    expect(released).toBe(true);
  });
});
