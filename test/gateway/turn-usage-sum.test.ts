/**
 * One Cursor turn over several responses (a tool loop: the turn parks on client tool calls, each tool result continues
 * it on the same Run) reports usage per response that adds up to the turn's: the response that ends the turn reports
 * Cursor's whole-turn `turn_ended` counts minus what the turn's earlier responses reported (docs/api.md "Usage"). Real
 * OpenAI and Anthropic SDKs through the server, the emulator upstream; the whole-turn counts are the emulator's own
 * (`GET /v1/agents/{id}/usage`, its `turn_ended` counts), and the gateway bills the key that same sum.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { periodAt } from "../../src/gateway/limits/periods.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import type { KeyLimits } from "../../src/surfaces/kit/principal.js";
import { silentLogger } from "../../src/util/logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, testLimits } from "./support.js";

/**
 * Three responses: two steps of tool calls, then the answer. The 300 one-letter words make Cursor's uncached input
 * (U = 302 tokens) no less than the two estimates the chat tool-call responses report (the request's characters / 4),
 * so there every count, the cache's included, adds up exactly.
 */
const PROMPT =
  `find it ${"w ".repeat(300)}[[emu:cached 500]] [[emu:tokens 3]] ` +
  '[[emu:tool lookup {"q":"first"}]] [[emu:then]] [[emu:tool lookup {"q":"second"}]]';
const parameters = { type: "object" as const, properties: { q: { type: "string" } } };

interface Counts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

const keys: KeyTable = new Map();
const spend = createMemorySpendStore();
let stack: Stack;
let counter = 0;
function key(limits: KeyLimits = {}): string {
  counter += 1;
  const name = `sumkey${counter}`;
  keys.set(name, limits);
  return name;
}

beforeAll(async () => {
  const limits = testLimits(keys, { counters: createMemoryLimitCounters(), spend, logger: silentLogger });
  stack = await startStack({ limits: limits.middleware });
});
afterAll(async () => stack.close());

/** The emulator's `turn_ended` counts of the newest conversation's Runs (one Run: the whole tool loop). */
async function emulatorTurn(): Promise<{ runs: number; usage: Counts }> {
  const turns = stack.emulator.stats().turns;
  const conversationId = turns.at(-1)?.conversationId ?? "";
  const response = await fetch(`${stack.emulator.url}/v1/agents/${encodeURIComponent(conversationId)}/usage`, {
    headers: { authorization: `Bearer ${stack.emulator.issueTokens().accessToken}` },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { usage: Counts; runs: unknown[] };
  return { runs: body.runs.length, usage: body.usage };
}

/** A key's spend this month once its `requests` requests have settled (a streamed one settles after its body). */
async function settledSpend(name: string, requests: number) {
  const period = periodAt("month", Date.now()).id;
  let totals = await spend.get(`id-${name}`, period);
  for (let attempt = 0; attempt < 150 && totals.requests < requests; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    totals = await spend.get(`id-${name}`, period);
  }
  return totals;
}

function add(sum: Counts, usage: Counts): void {
  sum.inputTokens += usage.inputTokens;
  sum.outputTokens += usage.outputTokens;
  sum.cacheReadTokens += usage.cacheReadTokens;
  sum.cacheWriteTokens += usage.cacheWriteTokens;
  sum.reasoningTokens += usage.reasoningTokens;
}
const zero = (): Counts => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

describe("the responses of one tool-loop turn add up to the turn's usage", () => {
  it.each([true, false])("OpenAI chat completions (stream %s), and the key is billed that sum", async (stream) => {
    const name = key();
    const openai = new OpenAI({ baseURL: stack.baseURL, apiKey: name, maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: PROMPT }];
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters } }];
    const sum = zero();
    const finishes: string[] = [];
    for (let response = 0; response < 5; response += 1) {
      let usage: OpenAI.CompletionUsage | undefined;
      let finish = "";
      const calls: { id: string; name: string; arguments: string }[] = [];
      if (stream) {
        const chunks = await openai.chat.completions.create({
          model: "auto",
          messages,
          tools,
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of chunks) {
          usage = chunk.usage ?? usage;
          const choice = chunk.choices[0];
          if (choice === undefined) continue;
          for (const call of choice.delta.tool_calls ?? []) {
            const at = calls[call.index] ?? { id: "", name: "", arguments: "" };
            calls[call.index] = at;
            at.id ||= call.id ?? "";
            at.name ||= call.function?.name ?? "";
            at.arguments += call.function?.arguments ?? "";
          }
          finish = choice.finish_reason ?? finish;
        }
      } else {
        const completion = await openai.chat.completions.create({ model: "auto", messages, tools });
        usage = completion.usage;
        const choice = completion.choices[0];
        finish = choice?.finish_reason ?? "";
        for (const call of choice?.message.tool_calls ?? []) {
          if (call.type === "function") calls.push({ id: call.id, ...call.function });
        }
      }
      expect(usage).toBeDefined();
      add(sum, {
        inputTokens: usage?.prompt_tokens ?? 0,
        outputTokens: usage?.completion_tokens ?? 0,
        cacheReadTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        cacheWriteTokens: 0,
        reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
      });
      expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
      finishes.push(finish);
      if (finish !== "tool_calls") break;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      });
      for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, content: `found ${call.id}` });
    }
    expect(finishes).toEqual(["tool_calls", "tool_calls", "stop"]);
    const turn = await emulatorTurn();
    expect(turn.runs).toBe(1);
    expect(turn.usage.inputTokens).toBe(2 * 302 + 500);
    expect(sum).toEqual({ ...turn.usage, cacheWriteTokens: 0 });

    const billed = await settledSpend(name, 3);
    expect(billed).toMatchObject({
      requests: 3,
      inputTokens: turn.usage.inputTokens,
      outputTokens: turn.usage.outputTokens,
      cachedTokens: turn.usage.cacheReadTokens,
    });
  });

  it("Anthropic messages: input + cache reads + cache writes, and output, add up to the turn's", async () => {
    const name = key();
    const anthropic = new Anthropic({ baseURL: stack.server.url, apiKey: name, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: PROMPT }];
    const tools = [{ name: "lookup", input_schema: parameters }];
    const sum = zero();
    const stops: string[] = [];
    for (let response = 0; response < 5; response += 1) {
      const message = await anthropic.messages
        .stream({ model: "auto", max_tokens: 1000, messages, tools })
        .finalMessage();
      const usage = message.usage;
      add(sum, {
        inputTokens:
          usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
        outputTokens: usage.output_tokens,
        cacheReadTokens: usage.cache_read_input_tokens ?? 0,
        cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
        reasoningTokens: 0,
      });
      stops.push(message.stop_reason ?? "");
      if (message.stop_reason !== "tool_use") break;
      messages.push({ role: "assistant", content: message.content });
      messages.push({
        role: "user",
        content: message.content.flatMap((block) =>
          block.type === "tool_use"
            ? [{ type: "tool_result" as const, tool_use_id: block.id, content: `found ${block.id}` }]
            : [],
        ),
      });
    }
    expect(stops).toEqual(["tool_use", "tool_use", "end_turn"]);
    const turn = await emulatorTurn();
    expect(turn.runs).toBe(1);
    // The Anthropic requests' estimates (content blocks) pass Cursor's uncached input, U: the cache writes are the
    // part of the last response's input that is left after them, so only they fall short (docs/api.md "Usage").
    expect({ ...sum, cacheWriteTokens: 0 }).toEqual({ ...turn.usage, cacheWriteTokens: 0, reasoningTokens: 0 });
    expect(sum.cacheWriteTokens).toBeGreaterThan(0);
    expect(sum.cacheWriteTokens).toBeLessThanOrEqual(turn.usage.cacheWriteTokens);
    const billed = await settledSpend(name, 3);
    expect(billed).toMatchObject({
      requests: 3,
      inputTokens: turn.usage.inputTokens,
      outputTokens: turn.usage.outputTokens,
    });
  });
});

describe("a turn whose parked Run died goes on on a new Run, which Cursor counts on its own", () => {
  it("the responses on the new Run add up to that Run's counts; nothing of the dead Run is taken off", async () => {
    const openai = new OpenAI({ baseURL: stack.baseURL, apiKey: key(), maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: PROMPT }];
    const tools = [{ type: "function" as const, function: { name: "lookup", parameters } }];
    const usages: OpenAI.CompletionUsage[] = [];
    const finishes: string[] = [];
    for (let response = 0; response < 5; response += 1) {
      const completion = await openai.chat.completions.create({ model: "auto", messages, tools });
      const choice = completion.choices[0];
      if (completion.usage !== undefined) usages.push(completion.usage);
      finishes.push(choice?.finish_reason ?? "");
      if (choice?.finish_reason !== "tool_calls") break;
      messages.push(choice.message);
      for (const call of choice.message.tool_calls ?? []) {
        messages.push({ role: "tool", tool_call_id: call.id, content: `found ${call.id}` });
      }
      // The first Run dies while parked: its turn goes on from the conversation on a new Run.
      if (response === 0) await stack.parked.closeAll();
    }
    expect(finishes).toEqual(["tool_calls", "tool_calls", "stop"]);
    const conversationId = stack.emulator.stats().turns.at(-1)?.conversationId;
    const runs = stack.emulator.stats().turns.filter((run) => run.conversationId === conversationId);
    expect(runs).toHaveLength(2);
    const turn = await emulatorTurn();
    // The dead Run never ended, so Cursor never counted it: the ledger holds the new Run alone.
    expect(turn.runs).toBe(1);
    const onNewRun = usages.slice(1);
    const sum = (pick: (usage: OpenAI.CompletionUsage) => number | undefined) =>
      onNewRun.reduce((total, usage) => total + (pick(usage) ?? 0), 0);
    expect({
      inputTokens: sum((usage) => usage.prompt_tokens),
      outputTokens: sum((usage) => usage.completion_tokens),
      cacheReadTokens: sum((usage) => usage.prompt_tokens_details?.cached_tokens),
    }).toEqual({
      inputTokens: turn.usage.inputTokens,
      outputTokens: turn.usage.outputTokens,
      cacheReadTokens: turn.usage.cacheReadTokens,
    });
  });
});
