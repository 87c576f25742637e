import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { ProxyError } from "../util/errors.js";
import { createParentLink } from "./parent-link.js";

/** The child's side wired to in-memory pipes; `requests` collects what the child asked for. */
function link(options: { requestTimeoutMs?: number; ppid?: () => number; pollMs?: number } = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  const requests: Array<Record<string, unknown>> = [];
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => {
    for (const line of chunk.split("\n").filter((l) => l !== "")) requests.push(JSON.parse(line));
  });
  const parent = createParentLink({ input, output, ...options });
  return { parent, input, requests };
}

describe("parent link (bridge child of the OpenCode plugin)", () => {
  it("asks the parent for a token and for a refresh naming the rejected token", async () => {
    const { parent, input, requests } = link();
    const token = parent.tokenSource.getAccessToken();
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    expect(requests[0]).toEqual({ id: 1, op: "token" });
    input.write(`${JSON.stringify({ id: 1, ok: true, accessToken: "access-1" })}\n`);
    expect(await token).toBe("access-1");

    const refreshed = parent.tokenSource.refreshAfterUnauthenticated("access-1");
    await vi.waitFor(() => expect(requests).toHaveLength(2));
    expect(requests[1]).toEqual({ id: 2, op: "refresh", rejected: "access-1" });
    // Noise and replies for unknown ids are ignored; the reply may arrive split across writes.
    input.write('not json\n{"id":99,"ok":true,"accessToken":"x"}\n{"id":2,"ok":true,');
    input.write('"accessToken":"access-2"}\n');
    expect(await refreshed).toBe("access-2");
    parent.close();
  });

  it("turns a failure reply into a ProxyError of that code", async () => {
    const { parent, input, requests } = link();
    const token = parent.tokenSource.getAccessToken();
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    input.write(`${JSON.stringify({ id: 1, ok: false, code: "unauthenticated", message: "log in again" })}\n`);
    const error = await token.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe("unauthenticated");
    expect((error as ProxyError).message).toBe("log in again");
    parent.close();
  });

  it("times out a request the parent never answers", async () => {
    const { parent } = link({ requestTimeoutMs: 20 });
    const error = await parent.tokenSource.getAccessToken().catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("timeout");
    parent.close();
  });

  it("reports the parent gone on stdin EOF and fails waiting requests", async () => {
    const { parent, input, requests } = link();
    const token = parent.tokenSource.getAccessToken();
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    input.end();
    await parent.parentGone;
    expect(((await token.catch((e: unknown) => e)) as ProxyError).code).toBe("backend_unavailable");
    expect(((await parent.tokenSource.getAccessToken().catch((e: unknown) => e)) as ProxyError).code).toBe(
      "backend_unavailable",
    );
  });

  it("reports the parent gone when the parent pid changes (reparented after the parent died)", async () => {
    let ppid = 4242;
    const { parent } = link({ ppid: () => ppid, pollMs: 5 });
    let gone = false;
    void parent.parentGone.then(() => (gone = true));
    ppid = 1;
    await vi.waitFor(() => expect(gone).toBe(true));
  });
});
