/**
 * The head of a streamed answer the Node listener writes itself (listen.ts, writeDirect): from the headers the
 * response was made with while nothing changed them, else from its `Headers` as they are then.
 */
import { request } from "node:http";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { pendingStreamedResponse } from "../util/pull-body.js";
import { listen, type RunningServer } from "./listen.js";

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function streamed(): Response {
  const pending = pendingStreamedResponse({
    status: 200,
    headers: { "content-type": "text/event-stream", "x-made": "1", "cache-control": "no-cache" },
  });
  let sent = false;
  pending.attach({
    read: async () => {
      const first = !sent;
      sent = true;
      return { frame: first ? "data: a\n\n" : "", last: !first };
    },
    errorFrame: () => "",
    release: async () => undefined,
  });
  return pending.response;
}

async function head(app: Hono): Promise<{ headers: Record<string, unknown>; body: string }> {
  const server = await listen({ fetch: app.fetch }, { host: "127.0.0.1", port: 0, apiKey: undefined });
  servers.push(server);
  return await new Promise((resolve, reject) => {
    const req = request(`${server.url}/`, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the head of a streamed answer written by the listener", () => {
  it("carries the headers it was made with", async () => {
    const app = new Hono();
    app.get("/", () => streamed());
    const { headers, body } = await head(app);
    expect(headers["x-made"]).toBe("1");
    expect(headers["content-type"]).toBe("text/event-stream");
    expect(body).toBe("data: a\n\n");
  });

  it.each([
    ["set", (h: Headers) => h.set("x-late", "2"), { "x-late": "2", "x-made": "1" }],
    ["appended", (h: Headers) => h.append("x-made", "3"), { "x-made": "1, 3" }],
    ["deleted", (h: Headers) => h.delete("x-made"), { "x-made": undefined }],
  ] as const)("carries a header %s after the handler, on the way back", async (_name, change, expected) => {
    const app = new Hono();
    app.use(async (c, next) => {
      await next();
      change(c.res.headers);
    });
    app.get("/", () => streamed());
    const { headers, body } = await head(app);
    for (const [name, value] of Object.entries(expected)) expect(headers[name], name).toBe(value);
    expect(body).toBe("data: a\n\n");
  });
});
