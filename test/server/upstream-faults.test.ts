/**
 * The emulator's upstream faults on every door, the three HTTP doors and ACP, through the real stack: every scripted
 * Cursor failure (`[[emu:error CODE]]`, a stall and a dropped connection, before and after output; docs/emulator.md)
 * is the same kind of error on each door's wire, an HTTP status (non-streaming; the streamed forms are the fault
 * matrix's, test/reliability/fault-matrix.test.ts) or ACP's JSON-RPC code with the bridge's code in `data`, never a
 * success, a hang or JSON-RPC's bare "Internal error"; and nothing leaks: every upstream turn a case opened has
 * ended and none is parked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { expectNothingLeftOpen } from "../support/upstream-leaks.js";
import { DOORS, send } from "./doors.js";

/** What a fault is on the wire: the HTTP status, and ACP's JSON-RPC code with the bridge's code and reason. */
interface Expected {
  status: number;
  acp: { code: number; data: { code: string; detail?: string; retryable: boolean } };
}

const FAULTS: Array<[directive: string, expected: Expected]> = [
  [
    "[[emu:error usage_limit]]",
    { status: 429, acp: { code: -32011, data: { code: "quota_exceeded", detail: "usage_limit", retryable: false } } },
  ],
  [
    "[[emu:error unauthenticated]]",
    { status: 401, acp: { code: -32000, data: { code: "unauthenticated", retryable: false } } },
  ],
  [
    "[[emu:error outdated_client]]",
    {
      status: 502,
      acp: { code: -32015, data: { code: "backend_protocol", detail: "outdated_client", retryable: false } },
    },
  ],
  [
    "[[emu:error internal]]",
    { status: 503, acp: { code: -32014, data: { code: "backend_unavailable", retryable: true } } },
  ],
  [
    "[[emu:error blob_not_found]]",
    {
      status: 502,
      acp: { code: -32015, data: { code: "backend_protocol", detail: "blob_not_found", retryable: false } },
    },
  ],
  ["[[emu:stall 0]]", { status: 504, acp: { code: -32016, data: { code: "timeout", retryable: true } } }],
  ["[[emu:drop 0]]", { status: 503, acp: { code: -32014, data: { code: "backend_unavailable", retryable: true } } }],
  // After output has started: still an error, never a clean end (ACP has streamed the text before it).
  [
    "[[emu:tokens 10]] [[emu:stall 3]]",
    { status: 504, acp: { code: -32016, data: { code: "timeout", retryable: true } } },
  ],
  [
    "[[emu:tokens 10]] [[emu:drop 3]]",
    { status: 503, acp: { code: -32014, data: { code: "backend_unavailable", retryable: true } } },
  ],
];

const MODEL = "claude-4.5-sonnet";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ stallTimeoutMs: 800 });
});
afterAll(async () => {
  await stack?.close();
});

describe.each(DOORS.map((door) => [door.name, door] as const))("upstream faults on the %s door", (_name, door) => {
  it.each(FAULTS)(
    "%s",
    async (directive, expected) => {
      const turnsBefore = stack.emulator.stats().turns.length;
      const target = {
        app: { request: (path: string, init: RequestInit) => fetch(`${stack.server.url}${path}`, init) },
        engine: stack.engine,
      };
      const answer = await send(door, target, door.basic(MODEL, `fault ${directive}`), {
        headers: { "anthropic-version": "2023-06-01" },
      });
      expect(answer.ok).toBe(false);
      expect(answer.error?.message).not.toMatch(/\n\s+at /);
      if (door.transport === "http") {
        expect(answer.status).toBe(expected.status);
      } else {
        expect(answer.acp?.stopReason).toBeUndefined();
        expect(answer.acp?.error).toMatchObject(expected.acp);
        if (directive.includes("tokens 10")) expect(answer.acp?.text).not.toBe("");
      }
      // No leaks: every upstream turn this case opened has ended, and nothing is parked.
      await expectNothingLeftOpen(stack, turnsBefore);
    },
    60_000,
  );
});
