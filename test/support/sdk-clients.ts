/** The OpenAI and Anthropic SDKs pointed at a stack's `/v1` (no retries: a test sees every answer as it came). */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll } from "vitest";
import { type Stack, type StackOptions, startStack } from "./stack.js";

export function sdkClients(baseURL: string): { openai: OpenAI; anthropic: Anthropic } {
  return {
    openai: new OpenAI({ baseURL, apiKey: "local", maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: baseURL.replace(/\/v1$/, ""), apiKey: "local", maxRetries: 0 }),
  };
}

/** A stack and the SDKs pointed at it ({@link useSdkStack}). */
export interface SdkStack {
  readonly stack: Stack;
  readonly openai: OpenAI;
  readonly anthropic: Anthropic;
}

/**
 * Starts a stack before the enclosing suite's tests (or the file's, at the top level) and closes it after them. The
 * fields are there from `beforeAll` on: read them in tests and hooks, not while the suite is being collected.
 */
export function useSdkStack(options?: StackOptions): SdkStack {
  let started: SdkStack | undefined;
  beforeAll(async () => {
    const stack = await startStack(options);
    started = { stack, ...sdkClients(stack.baseURL) };
  });
  afterAll(async () => started?.stack.close());
  const get = (): SdkStack => {
    if (started === undefined) throw new Error("useSdkStack: the stack starts in beforeAll; read it in a test or hook");
    return started;
  };
  return {
    get stack() {
      return get().stack;
    },
    get openai() {
      return get().openai;
    },
    get anthropic() {
      return get().anthropic;
    },
  };
}
