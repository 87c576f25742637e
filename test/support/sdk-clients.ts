/** The OpenAI and Anthropic SDKs pointed at a stack's `/v1` (no retries: a test sees every answer as it came). */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

export function sdkClients(baseURL: string): { openai: OpenAI; anthropic: Anthropic } {
  return {
    openai: new OpenAI({ baseURL, apiKey: "local", maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: baseURL.replace(/\/v1$/, ""), apiKey: "local", maxRetries: 0 }),
  };
}
