import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import type { EngineRequest } from "../engine/index.js";
import { answerShuttingDown } from "../server/drain.js";
import { ProxyError } from "../util/errors.js";
import { CLUSTER_HEADER, createClusterAuth, createMemoryNonceStore, deriveKey } from "./cluster-auth.js";
import { createTurnForwarder, FORWARD_PATH } from "./forwarder.js";
import { type InstanceDirectory, instanceOfToolCallId, newInstanceTag, toolCallIdSuffix } from "./instance.js";
import { decodeEngineRequest, encodeEngineRequest, type TurnFrame } from "./wire.js";

const request: EngineRequest = {
  model: "auto",
  instructions: [],
  messages: [
    { role: "user", parts: [{ type: "image", mimeType: "image/png", data: new Uint8Array([1, 2, 3]) }] },
    { role: "tool", toolCallId: "call_1_abc_cbxxxxxxxx", content: "r", isError: false },
  ],
  tools: [],
  options: { reasoning: false, reasoningEffort: undefined, toolChoice: "auto" },
};

const directory = (urls: Record<string, string>): InstanceDirectory => ({
  urlOf: async (tag) => urls[tag],
  list: async () => [],
  close: async () => {},
});

const ndjson = (frames: TurnFrame[], status = 200) =>
  new Response(frames.map((frame) => `${JSON.stringify(frame)}\n`).join(""), { status });

describe("instance tags", () => {
  it("tags ids at the end and reads the tag back, through prefixes clients add", () => {
    const tag = newInstanceTag();
    expect(tag).toMatch(/^[a-z0-9]{8}$/);
    expect(instanceOfToolCallId(`call_1_0123456789ab${toolCallIdSuffix(tag)}`)).toBe(tag);
    expect(instanceOfToolCallId(`toolu_call_1_0123456789ab${toolCallIdSuffix(tag)}`)).toBe(tag);
    expect(instanceOfToolCallId("call_1_0123456789ab")).toBeUndefined();
  });
});

describe("cluster auth", () => {
  const auth = createClusterAuth("one shared secret!!");
  it("accepts its own signature and rejects tampering, a foreign secret and stale requests", () => {
    const header = auth.sign("body", 1000);
    expect(auth.verify("body", header, 1000)).toBe(true);
    expect(auth.verify("body!", header, 1000)).toBe(false);
    expect(createClusterAuth("another secret!!!!").verify("body", header, 1000)).toBe(false);
    expect(auth.verify("body", header, 1000 + 61_000)).toBe(false);
    expect(auth.verify("body", undefined, 1000)).toBe(false);
  });
  it("accepts a signed request once: a replay within its window is refused, a fresh signature is not", async () => {
    let now = 1_000_000;
    const nonces = createMemoryNonceStore(() => now);
    const once = createClusterAuth("one shared secret!!", { nonces });
    const header = once.sign("body", now);
    expect(await once.accept("body", header, now)).toBe(true);
    now += 30_000;
    expect(await once.accept("body", header, now)).toBe(false);
    expect(await once.accept("body", once.sign("body", now), now)).toBe(true);
    // After the window the old header is refused as stale, however the nonce store forgot it.
    now += 31_001;
    expect(await once.accept("body", header, now)).toBe(false);
    // A header without a nonce (the format before nonces) is refused.
    expect(await once.accept("body", header.replace(/,n=[^,]+/, ""), now)).toBe(false);
  });
  it("keeps each nonce until its window ends, and no longer", async () => {
    let now = 0;
    const nonces = createMemoryNonceStore(() => now);
    expect(await nonces.claim("a".repeat(24), 1_000)).toBe(true);
    expect(await nonces.claim("a".repeat(24), 1_000)).toBe(false);
    now = 1_001;
    expect(await nonces.claim("a".repeat(24), 1_000)).toBe(true);
  });
  it("derives the same key from the same secret on every instance, a different one per purpose", () => {
    expect(deriveKey("s".repeat(16), "a")).toEqual(deriveKey("s".repeat(16), "a"));
    expect(deriveKey("s".repeat(16), "a")).not.toEqual(deriveKey("s".repeat(16), "b"));
  });
});

describe("wire", () => {
  it("round-trips a request with image bytes", () => {
    const back = decodeEngineRequest(encodeEngineRequest(request));
    expect(back).toEqual(request);
  });
  it("carries the request's named account, so the owner runs it on the same account (issue #29)", () => {
    const back = decodeEngineRequest(encodeEngineRequest({ ...request, account: "alice" }));
    expect(back.account).toBe("alice");
  });
  it("rejects a body that is not an engine request as a 400", () => {
    expect(() => decodeEngineRequest('{"model":1}')).toThrow(ProxyError);
  });
});

describe("turn forwarder", () => {
  const auth = createClusterAuth("one shared secret!!");

  it("names the owner only for ids of another instance", () => {
    const forwarder = createTurnForwarder({ selfTag: "selfself", directory: directory({}), auth });
    expect(forwarder.ownerOf([`a_0123456789ab${toolCallIdSuffix("selfself")}`])).toBeUndefined();
    expect(forwarder.ownerOf([`a_0123456789ab${toolCallIdSuffix("otherone")}`])).toBe("otherone");
    expect(forwarder.ownerOf(["a_0123456789ab"])).toBeUndefined();
  });

  it("reports an owner that left the directory or does not answer as gone", async () => {
    const signal = new AbortController().signal;
    const gone = createTurnForwarder({ selfTag: "selfself", directory: directory({}), auth });
    expect(await gone.forward("otherone", request, signal)).toBeUndefined();
    // A port that was just free: nothing listens, the connection is refused (the owner was killed).
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
    });
    const refused = createTurnForwarder({
      selfTag: "selfself",
      directory: directory({ otherone: `http://127.0.0.1:${port}` }),
      auth,
    });
    expect(await refused.forward("otherone", request, signal)).toBeUndefined();
  });

  it("reports an owner that refuses the request because it is shutting down as gone", async () => {
    // A real stopping server's answer (server/drain.ts), on a connection it still had open.
    const server = createHttpServer((req, res) => answerShuttingDown(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const forwarder = createTurnForwarder({
        selfTag: "selfself",
        directory: directory({ otherone: `http://127.0.0.1:${port}` }),
        auth,
      });
      expect(await forwarder.forward("otherone", request, new AbortController().signal)).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("relays a turn that lasts longer than the connect timeout (which bounds only the wait for its headers)", async () => {
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      const model = { id: "m", displayName: "M", aliases: [], reasoning: false, maxMode: false, vision: false };
      res.write(`${JSON.stringify({ type: "start", route: "resumed", model })}\n`);
      // An answer still streaming well after the connect timeout has passed.
      setTimeout(() => {
        res.write(`${JSON.stringify({ type: "event", event: { type: "text-delta", text: "late" } })}\n`);
        res.end(`${JSON.stringify({ type: "end", parked: false })}\n`);
      }, 2_500);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const forwarder = createTurnForwarder({
        selfTag: "selfself",
        directory: directory({ otherone: `http://127.0.0.1:${port}` }),
        auth,
        connectTimeoutMs: 1_000,
      });
      const turn = await forwarder.forward("otherone", request, new AbortController().signal);
      const events = [];
      for await (const event of turn?.events ?? []) events.push(event);
      expect(events).toEqual([{ type: "text-delta", text: "late" }]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("signs the request and relays the owner's turn frame by frame", async () => {
    let seen: { url: string; header: string | null; body: string } | undefined;
    const forwarder = createTurnForwarder({
      selfTag: "selfself",
      directory: directory({ otherone: "http://owner.internal:8765" }),
      auth,
      fetch: async (input, init) => {
        const body = String(init?.body);
        seen = { url: String(input), header: new Headers(init?.headers).get(CLUSTER_HEADER), body };
        return ndjson([
          {
            type: "start",
            route: "resumed",
            model: { id: "m", displayName: "M", aliases: [], reasoning: false, maxMode: false, vision: false },
          },
          { type: "event", event: { type: "text-delta", text: "hi" } },
          { type: "event", event: { type: "turn-end", reason: "tool-calls" } },
          { type: "end", parked: true },
        ]);
      },
    });
    const turn = await forwarder.forward("otherone", request, new AbortController().signal);
    expect(seen?.url).toBe(`http://owner.internal:8765${FORWARD_PATH}`);
    expect(auth.verify(seen?.body ?? "", seen?.header ?? undefined)).toBe(true);
    expect(turn?.route).toBe("resumed");
    const events = [];
    for await (const event of turn?.events ?? []) events.push(event.type);
    expect(events).toEqual(["text-delta", "turn-end"]);
    expect(turn?.parked).toBe(true);
  });

  it("rethrows the owner's error as the same ProxyError", async () => {
    const forwarder = createTurnForwarder({
      selfTag: "selfself",
      directory: directory({ otherone: "http://owner.internal:8765" }),
      auth,
      fetch: async () =>
        ndjson(
          [{ type: "error", error: { code: "invalid_request", message: "busy", status: 409, retryable: false } }],
          409,
        ),
    });
    const error = await forwarder.forward("otherone", request, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).status).toBe(409);
    expect((error as ProxyError).message).toBe("busy");
  });
});
