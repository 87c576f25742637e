import { describe, expect, it } from "vitest";
import { type PullSource, preparePullBody, pullBody, streamedResponse } from "./pull-body.js";

/** A source of `frames`, the last one marked last; `released` counts the releases. */
function sourceOf(frames: string[]): PullSource & { released: number } {
  let next = 0;
  return {
    released: 0,
    read: async () => {
      const frame = frames[next] ?? "";
      next += 1;
      return { frame, last: next >= frames.length };
    },
    errorFrame: () => "",
    async release() {
      this.released += 1;
    },
  };
}

const nextImmediate = () => new Promise((resolve) => setImmediate(resolve));

describe("preparePullBody", () => {
  it("hands out a web stream built in the next check phase that reads its source once bound", async () => {
    const prepared = preparePullBody();
    await nextImmediate();
    const shell = prepared.take();
    const body = pullBody(sourceOf(["a", "b", "c"]), {}, shell);
    expect(body).toBe(shell.stream);
    expect(await new Response(body).text()).toBe("abc");
  });

  it("builds the stream at once when taken before the check phase, and a second take gets a fresh one", async () => {
    const prepared = preparePullBody();
    const first = prepared.take();
    await nextImmediate();
    const second = prepared.take();
    expect(second.stream).not.toBe(first.stream);
    expect(await new Response(pullBody(sourceOf(["x", "y"]), {}, first)).text()).toBe("xy");
    expect(await new Response(pullBody(sourceOf(["z"]), {}, second)).text()).toBe("z");
  });

  it("keeps the direct writer and the cancel path of a prepared body", async () => {
    const prepared = preparePullBody();
    await nextImmediate();
    const source = sourceOf(["one", "two", "three"]);
    let canceled = 0;
    let ended = 0;
    const body = pullBody(source, { onCancel: () => (canceled += 1), onEnd: () => (ended += 1) }, prepared.take());
    const reader = streamedResponse(body, { status: 200 }).body?.getReader();
    expect(new TextDecoder().decode((await reader?.read())?.value)).toBe("one");
    await reader?.cancel("gone");
    expect(canceled).toBe(1);
    expect(source.released).toBe(1);
    expect(ended).toBe(1);
  });

  it("builds nothing after drop()", async () => {
    const prepared = preparePullBody();
    prepared.drop();
    await nextImmediate();
    // Taking after a drop still works (built at once), so a caller that drops by mistake only loses the head start.
    expect(await new Response(pullBody(sourceOf(["q"]), {}, prepared.take())).text()).toBe("q");
  });
});
