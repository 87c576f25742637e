import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { encodeSseData, encodeSseError, SSE_DONE } from "./sse.js";

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
