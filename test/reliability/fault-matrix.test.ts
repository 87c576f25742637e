/**
 * The emulator fault matrix: every scripted upstream failure (`[[emu:error CODE]]`, a stall and a dropped
 * connection, before and after output), streaming and not, through the real stack. Each case asserts the HTTP
 * status, the OpenAI error body (or the SSE error frame after output) and that nothing leaks: every upstream turn
 * the emulator opened is closed and no turn is left parked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { expectNothingLeftOpen } from "../support/upstream-leaks.js";

interface Expected {
  status: number;
  code: string;
  /** x-should-retry on an HTTP error. */
  retry?: "true" | "false";
  /** The error arrives as an SSE frame after output (streaming only). */
  frame?: boolean;
}

type Row = [directive: string, stream: boolean, expected: Expected];

const ERRORS: Array<[string, Expected]> = [
  ["[[emu:error usage_limit]]", { status: 429, code: "insufficient_quota", retry: "false" }],
  ["[[emu:error unauthenticated]]", { status: 401, code: "cursor_auth_failed", retry: "false" }],
  ["[[emu:error outdated_client]]", { status: 502, code: "outdated_client", retry: "false" }],
  ["[[emu:error internal]]", { status: 503, code: "upstream_unavailable", retry: "true" }],
  ["[[emu:error blob_not_found]]", { status: 502, code: "blob_not_found", retry: "false" }],
  ["[[emu:stall 0]]", { status: 504, code: "upstream_timeout", retry: "true" }],
  ["[[emu:drop 0]]", { status: 503, code: "upstream_unavailable", retry: "true" }],
];

const ROWS: Row[] = [
  ...ERRORS.flatMap(([directive, expected]): Row[] => [
    [directive, false, expected],
    [directive, true, expected],
  ]),
  // After output has started: a non-streaming answer is still an HTTP error; a stream ends in one error frame.
  ["[[emu:tokens 10]] [[emu:stall 3]]", false, { status: 504, code: "upstream_timeout", retry: "true" }],
  ["[[emu:tokens 10]] [[emu:stall 3]]", true, { status: 200, code: "upstream_timeout", frame: true }],
  ["[[emu:tokens 10]] [[emu:drop 3]]", false, { status: 503, code: "upstream_unavailable", retry: "true" }],
  ["[[emu:tokens 10]] [[emu:drop 3]]", true, { status: 200, code: "upstream_unavailable", frame: true }],
];

interface ErrorShape {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function expectErrorShape(value: unknown): asserts value is ErrorShape {
  expect(value).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
  const error = (value as ErrorShape).error;
  expect(error.message).not.toMatch(/\n\s+at /);
  expect(error.param === null || typeof error.param === "string").toBe(true);
}

const counts = { cases: 0, httpErrors: 0, sseFrames: 0 };

afterAll(() => {
  process.stdout.write(
    `reliability: fault matrix ran ${counts.cases} cases (${counts.httpErrors} HTTP errors, ${counts.sseFrames} SSE error frames)\n`,
  );
});

describe.each(["http2", "http1"] as const)("emulator fault matrix over %s", (transport) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ stallTimeoutMs: 800, transport });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it.each(ROWS)("%s stream=%s", async (directive, stream, expected) => {
    const turnsBefore = stack.emulator.stats().turns.length;
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", stream, messages: [{ role: "user", content: `fault ${directive}` }] }),
    });
    expect(res.status).toBe(expected.status);
    expect(res.headers.get("x-request-id")).toMatch(/^[\w=-]+$/);
    if (expected.frame) {
      const text = await res.text();
      expect(text).not.toContain("[DONE]");
      const last = text.trim().split("\n\n").at(-1) ?? "";
      expect(last.startsWith("data: ")).toBe(true);
      const frame = JSON.parse(last.slice("data: ".length)) as unknown;
      expectErrorShape(frame);
      expect(frame.error.code).toBe(expected.code);
      counts.sseFrames += 1;
    } else {
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      const body = (await res.json()) as unknown;
      expectErrorShape(body);
      expect(body.error.code).toBe(expected.code);
      expect(res.headers.get("x-should-retry")).toBe(expected.retry);
      if (expected.code === "insufficient_quota") expect(res.headers.get("retry-after")).toBeNull();
      counts.httpErrors += 1;
    }
    counts.cases += 1;
    // No leaks: every upstream turn this case opened has ended, and nothing is parked.
    await expectNothingLeftOpen(stack, turnsBefore);
  });
});
