import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { encodeSseData, encodeSseError, SSE_DONE, toSseBody } from "./sse.js";

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

describe("toSseBody", () => {
  it("writes one frame per chunk, then [DONE], and reports the end once", async () => {
    async function* chunks() {
      yield { n: 1 };
      yield { text: "é\n" };
    }
    let ended = 0;
    const body = await new Response(toSseBody(chunks(), { onEnd: () => ended++ })).text();
    expect(body).toBe(`data: {"n":1}\n\ndata: {"text":"é\\n"}\n\n${SSE_DONE}`);
    expect(ended).toBe(1);
  });

  it("ends with one error frame when the source throws, and reports the error", async () => {
    const failure = new ProxyError("backend_unavailable", "upstream went away");
    async function* chunks() {
      yield { n: 1 };
      throw failure;
    }
    const seen: unknown[] = [];
    const body = await new Response(toSseBody(chunks(), { onError: (error) => seen.push(error) })).text();
    expect(body).toBe(`data: {"n":1}\n\n${encodeSseError(failure)}`);
    expect(body).not.toContain("[DONE]");
    expect(seen).toEqual([failure]);
  });

  it("on cancel calls onCancel, then the source's return(), then onEnd", async () => {
    const order: string[] = [];
    async function* chunks() {
      try {
        for (let n = 0; ; n++) yield { n };
      } finally {
        order.push("released");
      }
    }
    const reader = toSseBody(chunks(), {
      onCancel: (reason) => order.push(`cancel:${String(reason)}`),
      onEnd: () => order.push("end"),
    }).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: {"n":0}\n\n');
    await reader.cancel("gone");
    expect(order).toEqual(["cancel:gone", "released", "end"]);
  });
});
