import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../util/logger.js";
import { type AppEnv, accessLog, type RequestDone } from "./access-log.js";

/** Ends the streamed body of the last chat request. */
let release = () => {};

function appWith(listeners: ((done: RequestDone) => void)[], lines: string[] = []) {
  const logger = createLogger({ level: "info", sink: (line) => lines.push(line) });
  const app = new Hono<AppEnv>();
  app.use(accessLog(logger, Date.now, () => "id-1", undefined, listeners));
  app.get("/v1/models", (c) => c.json({ data: [] }));
  app.post("/v1/chat/completions", (c) => {
    c.get("log").streaming = new Promise<void>((resolve) => {
      release = resolve;
    });
    return c.text("streamed");
  });
  return app;
}

describe("the access log's onRequestDone listeners", () => {
  it("each receive a request once it is done, with its surface and status", async () => {
    const seen: RequestDone[] = [];
    const also: string[] = [];
    const app = appWith([(done) => seen.push(done), (done) => also.push(done.surface)]);
    expect((await app.request("/v1/models")).status).toBe(200);
    expect((await app.request("/nowhere")).status).toBe(404);
    expect(seen.map((done) => [done.surface, done.status, done.api])).toEqual([
      ["models", 200, true],
      ["other", 404, false],
    ]);
    expect(also).toEqual(["models", "other"]);
  });

  it("wait for a streamed body to end", async () => {
    const seen: RequestDone[] = [];
    const app = appWith([(done) => seen.push(done)]);
    const response = await app.request("/v1/chat/completions", { method: "POST" });
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(0);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.map((done) => done.surface)).toEqual(["chat"]);
  });

  it("a listener that throws is logged; the others and the answer are unaffected", async () => {
    const lines: string[] = [];
    const seen: string[] = [];
    const app = appWith(
      [
        () => {
          throw new Error("boom");
        },
        (done) => seen.push(done.path),
      ],
      lines,
    );
    expect((await app.request("/v1/models")).status).toBe(200);
    expect(seen).toEqual(["/v1/models"]);
    expect(lines.some((line) => line.includes("request-done listener failed"))).toBe(true);
  });
});
