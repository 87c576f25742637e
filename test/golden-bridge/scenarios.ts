/**
 * Golden scenarios for the bridge: test/fixtures/<name>.events.jsonl (one BackendEvent per line) is translated by
 * chatTranslation + streamTurn (the server's own body) into the exact client bytes, compared with test/fixtures/<name>.sse.
 * A line `{"$throw":{"code","message"}}` makes the fake backend throw that ProxyError at that point.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { BackendEvent } from "../../src/backend/types.js";
import { CHAT_WIRE, type ChatTranslationOptions, chatTranslation } from "../../src/surfaces/chat/events.js";
import { streamTurn } from "../../src/surfaces/kit/translate.js";
import { ProxyError, type ProxyErrorCode } from "../../src/util/errors.js";

export const FIXTURES_DIR = fileURLToPath(new URL("../fixtures/", import.meta.url));

/** One golden scenario: the options it runs with, and for client-abort how many frames the client reads. */
export interface Scenario {
  name: string;
  options: Partial<ChatTranslationOptions>;
  abortAfterFrames?: number;
}

export const SCENARIOS: Scenario[] = [
  { name: "plain-text", options: {} },
  { name: "reasoning-content", options: { reasoning: "reasoning_content" } },
  { name: "reasoning-think-tags", options: { reasoning: "think-tags" } },
  { name: "reasoning-none", options: { reasoning: "none" } },
  { name: "tool-call-single", options: {} },
  { name: "tool-calls-parallel", options: { includeUsage: true } },
  { name: "tool-call-unicode-split", options: {} },
  { name: "tool-call-streamed-2k", options: {} },
  { name: "usage", options: { includeUsage: true } },
  { name: "length", options: { includeUsage: true } },
  { name: "backend-error-mid-stream", options: {} },
  { name: "client-abort", options: {}, abortAfterFrames: 3 },
];

type FixtureLine = BackendEvent | { $throw: { code: ProxyErrorCode; message: string } };

/** Deterministic id generator and clock, injected the way the server injects its providers. */
export function fixedOptions(overrides: Partial<ChatTranslationOptions>): ChatTranslationOptions {
  let counter = 0;
  const nextId = () => `chatcmpl-golden${++counter}`;
  const clock = () => 1_767_225_600_000;
  return {
    id: nextId(),
    created: Math.floor(clock() / 1000),
    model: "cursor-test",
    reasoning: "reasoning_content",
    includeUsage: false,
    ...overrides,
  };
}

/** A fake backend segment replaying a fixture; `released` turns true when its `finally` runs. */
export function replay(name: string): { events: AsyncIterable<BackendEvent>; released: () => boolean } {
  const lines = readFileSync(`${FIXTURES_DIR}${name}.events.jsonl`, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as FixtureLine);
  let released = false;
  async function* events(): AsyncIterable<BackendEvent> {
    try {
      for (const line of lines) {
        if ("$throw" in line) throw new ProxyError(line.$throw.code, line.$throw.message);
        yield line;
      }
    } finally {
      released = true;
    }
  }
  return { events: events(), released: () => released };
}

/** Runs a scenario to the bytes the client receives, and reports whether the backend was released. */
export async function runScenario(scenario: Scenario): Promise<{ sse: string; released: boolean }> {
  const { events, released } = replay(scenario.name);
  let sse = "";
  let frames = 0;
  const reader = streamTurn(events, chatTranslation(fixedOptions(scenario.options)), CHAT_WIRE).getReader();
  const decoder = new TextDecoder();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    sse += decoder.decode(read.value);
    frames += 1;
    if (scenario.abortAfterFrames !== undefined && frames >= scenario.abortAfterFrames) {
      await reader.cancel();
      break;
    }
  }
  return { sse, released: released() };
}

/** The final arguments of a fixture's one tool call (what the client's argument deltas must add up to). */
export function finalArguments(name: string): string {
  const lines = readFileSync(`${FIXTURES_DIR}${name}.events.jsonl`, "utf8").split("\n").filter(Boolean);
  const call = lines
    .map((line) => JSON.parse(line) as FixtureLine)
    .find((line) => "type" in line && line.type === "tool-call");
  if (call === undefined || !("type" in call) || call.type !== "tool-call") throw new Error(`${name} has no tool call`);
  return call.arguments;
}
