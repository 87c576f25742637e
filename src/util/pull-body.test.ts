import { describe, expect, it } from "vitest";
import { directBodyOf, type PullSource, pendingStreamedResponse } from "./pull-body.js";

function frames(...list: string[]): PullSource {
  let index = 0;
  return {
    read: async () => ({ frame: list[index++] ?? "", last: index >= list.length }),
    errorFrame: () => "error\n",
    release: async () => undefined,
  };
}

describe("pendingStreamedResponse", () => {
  it("serves the frames of the source attached after it was made, with its status, headers and callbacks", async () => {
    let ended = 0;
    const pending = pendingStreamedResponse(
      { status: 200, headers: { "content-type": "text/event-stream" } },
      { onEnd: () => ended++ },
    );
    pending.response.headers.set("x-request-id", "req-1");
    pending.attach(frames("a\n", "b\n", "c\n"));
    expect(pending.response.status).toBe(200);
    expect(pending.response.headers.get("content-type")).toBe("text/event-stream");
    expect(pending.response.headers.get("x-request-id")).toBe("req-1");
    expect(await pending.response.text()).toBe("a\nb\nc\n");
    expect(ended).toBe(1);
  });

  it("is a response the Node listener may write directly", () => {
    const pending = pendingStreamedResponse({ status: 200 });
    pending.attach(frames("a\n"));
    expect(directBodyOf(pending.response)).toBeTypeOf("function");
  });

  it("takes one source only", () => {
    const pending = pendingStreamedResponse({ status: 200 });
    pending.attach(frames("a\n"));
    expect(() => pending.attach(frames("b\n"))).toThrow(/already has its source/);
  });
});
