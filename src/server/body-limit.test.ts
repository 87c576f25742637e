import { EventEmitter } from "node:events";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { limitBody, MarkSniffer } from "./body-limit.js";

function appWithLimit(maxBytes: number) {
  const app = new Hono();
  app.use(limitBody(maxBytes, (c) => c.text("too large", 413)));
  app.post("/echo", async (c) => c.text(await c.req.text()));
  app.get("/echo", (c) => c.text("get"));
  return app;
}

describe("limitBody", () => {
  it("judges a declared content-length without reading the body", async () => {
    const app = appWithLimit(8);
    const small = await app.request("/echo", { method: "POST", body: "12345", headers: { "content-length": "5" } });
    expect(small.status).toBe(200);
    expect(await small.text()).toBe("12345");
    const big = await app.request("/echo", { method: "POST", body: "123456789", headers: { "content-length": "9" } });
    expect(big.status).toBe(413);
  });

  it("counts the bytes of a body without a declared length", async () => {
    const app = appWithLimit(8);
    const stream = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(text));
          controller.close();
        },
      });
    const init = (text: string) => ({ method: "POST", body: stream(text), duplex: "half" }) as RequestInit;
    const small = await app.request("/echo", init("1234"));
    expect(small.status).toBe(200);
    expect(await small.text()).toBe("1234");
    expect((await app.request("/echo", init("123456789"))).status).toBe(413);
  });

  it("stops keeping a body without a declared length at the limit and reads the rest before answering", async () => {
    const app = appWithLimit(8);
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        if (pulled > 100) controller.close();
        else controller.enqueue(new Uint8Array(1024));
      },
    });
    const res = await app.request("/echo", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    // The whole upload was read (and dropped), so the client is never cut off while it sends.
    expect(pulled).toBe(101);
  });

  it("hands the body to the handler through hono's cache, decoded as fetch does", async () => {
    const app = appWithLimit(64);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":"é"}')]);
    const res = await app.request("/echo", { method: "POST", body: bom });
    expect(await res.text()).toBe('{"a":"é"}');
  });

  it("passes bodiless methods through", async () => {
    const res = await appWithLimit(0).request("/echo");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("get");
  });
});

describe("MarkSniffer", () => {
  const found = (chunks: readonly string[], marks = ['"image"', "data:image/"]) => {
    const sniffer = new MarkSniffer(marks.map((mark) => Buffer.from(mark)));
    for (const chunk of chunks) sniffer.feed(Buffer.from(chunk));
    return sniffer.found;
  };

  it("finds a mark inside a chunk, or split over two or more chunks", () => {
    expect(found(['{"type":"image","x":1}'])).toBe(true);
    expect(found(['{"type":"im', 'age","x":1}'])).toBe(true);
    expect(found(["url: data:im", "a", "g", "e/png"])).toBe(true);
    expect(found(['"', "i", "m", "a", "g", "e", '"'])).toBe(true);
  });

  it("finds nothing in a body without one", () => {
    expect(found(['{"content":"an image of a cat"}', "x".repeat(100)])).toBe(false);
    expect(found(['{"type":"imag', "x", 'e"}'])).toBe(false);
    expect(found([])).toBe(false);
  });
});

describe("limitBody over a Node request", () => {
  /** A Node request body that sends `parts` once resumed and ends only when `end()` is called. */
  function nodeBody(parts: string[]) {
    const body = Object.assign(new EventEmitter(), {
      readableEnded: false,
      destroyed: false,
      resume() {
        setImmediate(() => {
          for (const part of parts) body.emit("data", Buffer.from(part));
        });
        return body;
      },
      end() {
        body.readableEnded = true;
        body.emit("end");
      },
    });
    return body;
  }

  async function run(headers: Record<string, string>, body: ReturnType<typeof nodeBody>) {
    const app = new Hono<{ Bindings: { incoming: unknown } }>();
    app.use(limitBody(64, (c) => c.text("too large", 413)));
    app.post("/echo", async (c) => c.text(await c.req.text()));
    return app.request("/echo", { method: "POST", headers }, { incoming: body });
  }

  it("has the body once its declared length came, without waiting for the stream's end", async () => {
    const body = nodeBody(["hel", "lo"]);
    const res = await run({ "content-length": "5" }, body);
    expect(await res.text()).toBe("hello");
    expect(body.readableEnded).toBe(false);
  });

  it("waits for the end when the length is not declared, or not all of it came", async () => {
    for (const headers of [{ "transfer-encoding": "chunked" }, {}, { "content-length": "9" }]) {
      const body = nodeBody(["hel", "lo"]);
      const answered = run(headers, body);
      const first = await Promise.race([answered, new Promise((resolve) => setTimeout(() => resolve("waiting"), 50))]);
      expect(first, JSON.stringify(headers)).toBe("waiting");
      body.end();
      expect(await (await answered).text()).toBe("hello");
    }
  });
});
