/**
 * One log line explains a request on every door (issue #23): the resolved Cursor model (`model`), the conversation
 * (`conv`), the upstream Run (`run`) and, on failures, the error code (`code`), with the same keys in JSON logs; the
 * status page's record keeps the code and the reason shown on hover.
 */
import { describe, expect, it } from "vitest";
import { ProxyError } from "../../src/util/errors.js";
import { createLogger } from "../../src/util/logger.js";
import { startStack } from "../support/stack.js";
import { appWithRecorder, HTTP_DOORS, post } from "./doors.js";

function capture(format: "text" | "json") {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: "info", format, sink: (line) => lines.push(line) }) };
}

/** The access-log line of `path` (the only info line a request writes). */
function accessLine(lines: readonly string[], path: string): string {
  const line = lines.find((candidate) => candidate.includes(`POST ${path} `));
  if (line === undefined) throw new Error(`no access log line for ${path} in:\n${lines.join("\n")}`);
  return line;
}

describe.each(HTTP_DOORS.map((door) => [door.name, door] as const))("the %s door's log line", (_name, door) => {
  it("names the resolved model, the conversation and the Run", async () => {
    const { lines, logger } = capture("text");
    const { app } = appWithRecorder({ modelAliases: ["fast=gpt-5.2"] }, logger);
    const response = await app.request(door.path, post(door.basic("fast")));
    expect(response.status).toBe(200);
    await response.text();
    const line = accessLine(lines, door.path);
    expect(line).toContain(" 200 ");
    expect(line).toMatch(/ model=gpt-5\.2 /);
    expect(line).toMatch(/ conv=conv-1 /);
    expect(line).toMatch(/ run=run-1 /);
    expect(line).not.toMatch(/ code=/);
  });

  it("names the error code of a failure before the answer, with the conversation and Run it reached", async () => {
    const { lines, logger } = capture("json");
    const limited = new ProxyError("rate_limited", "Cursor is rate limiting this account.", { retryAfterSeconds: 5 });
    const { app } = appWithRecorder({}, logger, limited);
    const response = await app.request(door.path, post(door.basic("gpt-5.2")));
    expect(response.status).toBe(429);
    expect(response.headers.get("x-should-retry")).toBe("true");
    expect(response.headers.get("retry-after")).toBe("5");
    const record = JSON.parse(accessLine(lines, door.path)) as Record<string, unknown>;
    expect(record).toMatchObject({ model: "gpt-5.2", conv: "conv-1", run: "run-1", code: "rate_limited" });
  });

  it("names the error code of a request refused before any Run (and no conversation)", async () => {
    const { lines, logger } = capture("text");
    const { app } = appWithRecorder({}, logger);
    const response = await app.request(door.path, post(door.basic("no-such-model")));
    expect(response.status).toBe(404);
    const line = accessLine(lines, door.path);
    // The model field of logs, metrics and the page holds only a listed model or `unknown`; the log line keeps
    // what was asked (redacted) beside it.
    expect(line).toMatch(/ model=unknown asked=no-such-model /);
    expect(line).toMatch(/ code=not_found /);
    expect(line).not.toMatch(/ conv=| run=/);
  });
});

describe("a path no door serves", () => {
  it("logs its 404 with the code, like every other failure", async () => {
    const { lines, logger } = capture("text");
    const { app } = appWithRecorder({}, logger);
    expect((await app.request("/v1/chat/complete", post({}))).status).toBe(404);
    expect((await app.request("/v2/nothing", post({}))).status).toBe(404);
    expect(accessLine(lines, "/v1/chat/complete")).toMatch(/ 404 .* code=not_found /);
    expect(accessLine(lines, "/v2/nothing")).toMatch(/ 404 .* code=not_found /);
  });
});

describe("the status page's recent requests", () => {
  it("keep the error code and the reason the client was told", async () => {
    const { app } = appWithRecorder();
    await app.request(
      "/v1/chat/completions",
      post({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }),
    );
    const status = (await (await app.request("/status.json")).json()) as {
      requests: Array<{ status: number; errorCode?: string; errorMessage?: string }>;
    };
    expect(status.requests[0]).toMatchObject({ status: 404, errorCode: "not_found" });
    expect(status.requests[0]?.errorMessage).toContain("The model `no-such-model` does not exist.");
  });
});

describe("through the real agent client and the emulator", () => {
  it("the debug 'Run opened' line carries the request id and the Run the access line names", async () => {
    const lines: string[] = [];
    const stack = await startStack({ logLines: lines });
    try {
      const response = await fetch(`${stack.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "req-trace-1" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(200);
      await response.text();
      const access = accessLine(lines, "/v1/chat/completions");
      const run = / run=(\S+)/.exec(access)?.[1];
      const conv = / conv=(\S+)/.exec(access)?.[1];
      expect(run).toMatch(/^[0-9a-f-]{36}$/);
      // `auto` is routed by Cursor (the emulator picks composer-1.5), and the line names the model that served.
      expect(access).toMatch(/ model=composer-1\.5 /);
      const opened = lines.find((line) => line.includes("Run opened"));
      expect(opened).toContain("requestId=req-trace-1");
      expect(opened).toContain(`run=${run}`);
      expect(opened).toContain(`conversationId=${conv}`);
    } finally {
      await stack.close();
    }
  });
});
