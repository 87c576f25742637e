/**
 * Cursor's transient errors reach the SDKs as errors they retry, its final ones as errors they do not, counted by
 * the requests that reach the bridge and the Runs that reach the emulator. Cursor's own clients retry an `internal`
 * error (a Connect `internal`, or ErrorDetails ERROR_INTERNAL without `is_retryable: false`; cursor-protocol
 * addendum 2 §8), so the bridge answers it 503 with `x-should-retry: true`, which openai-node and the Anthropic SDK
 * retry (their default of 2 retries: 3 requests, one Run each). Final errors (`is_retryable: false`, a kind of
 * `x-cursor-inference-request-error-type`, a usage limit) reach the bridge once.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

/** The SDKs with their default retries, counting the requests they send. */
function countingClients(baseURL: string) {
  const sent = { count: 0 };
  const counting: typeof fetch = (input, init) => {
    sent.count += 1;
    return fetch(input, init);
  };
  return {
    sent,
    openai: new OpenAI({ baseURL, apiKey: "local", maxRetries: 2, fetch: counting }),
    anthropic: new Anthropic({
      baseURL: baseURL.replace(/\/v1$/, ""),
      apiKey: "local",
      maxRetries: 2,
      fetch: counting,
    }),
  };
}

describe("transient and final Cursor errors through the SDKs' retries", () => {
  let stack: Stack;
  let clients: ReturnType<typeof countingClients>;

  beforeAll(async () => {
    stack = await startStack();
    clients = countingClients(stack.baseURL);
  });
  afterAll(async () => stack.close());

  const runs = () => {
    const stats = stack.emulator.stats();
    return stats.runStreams + stats.runSseStreams;
  };

  /** Requests sent and Runs started while `call` ran, and what it threw. */
  async function counted(call: () => Promise<unknown>) {
    const sentBefore = clients.sent.count;
    const runsBefore = runs();
    const error = await call().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    return { error, requests: clients.sent.count - sentBefore, runs: runs() - runsBefore };
  }

  const chat =
    (content: string, stream = false) =>
    async () => {
      const answer = await clients.openai.chat.completions.create({
        model: "auto",
        stream,
        messages: [{ role: "user", content }],
      });
      if (stream) for await (const _ of answer as AsyncIterable<unknown>);
    };
  const responses = (content: string) => () =>
    clients.openai.responses.create({ model: "auto", store: false, input: content });
  const messages =
    (content: string, stream = false) =>
    () =>
      stream
        ? clients.anthropic.messages
            .stream({ model: "auto", max_tokens: 100, messages: [{ role: "user", content }] })
            .finalMessage()
        : clients.anthropic.messages.create({ model: "auto", max_tokens: 100, messages: [{ role: "user", content }] });

  it.each([
    ["a Connect internal", "[[emu:error internal]]"],
    ["ERROR_INTERNAL without is_retryable", "[[emu:error INTERNAL]]"],
  ])("%s is retried by openai-node on chat (streamed and not) and responses", async (_, directive) => {
    for (const call of [chat(directive), chat(directive, true), responses(directive)]) {
      const { error, requests, runs } = await counted(call);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get("x-should-retry")).toBe("true");
      expect({ requests, runs }).toEqual({ requests: 3, runs: 3 });
    }
  });

  it("a Connect internal is retried by the Anthropic SDK, streamed and not", async () => {
    for (const call of [messages("[[emu:error internal]]"), messages("[[emu:error internal]]", true)]) {
      const { error, requests, runs } = await counted(call);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
      expect({ requests, runs }).toEqual({ requests: 3, runs: 3 });
    }
  });

  it.each([
    ["a usage limit", "[[emu:error usage_limit]]"],
    ["a final inference error type", "[[emu:error CONVERSATION_TOO_LONG]]"],
    ["a blob not found on a new conversation", "[[emu:error blob_not_found]]"],
  ])("%s stays final: one request, one Run, on both SDKs", async (_, directive) => {
    for (const call of [chat(directive), messages(directive)]) {
      const { error, requests, runs } = await counted(call);
      expect(error).toBeInstanceOf(Error);
      expect({ requests, runs }).toEqual({ requests: 1, runs: 1 });
    }
  });

  it("ERROR_INTERNAL that Cursor marks retryable is retried (as before)", async () => {
    const { error, requests, runs } = await counted(chat("[[emu:error INTERNAL retryable]]"));
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect({ requests, runs }).toEqual({ requests: 3, runs: 3 });
  });
});
