/**
 * Opt-in tests against the real Cursor service: `CURSOR_LIVE=1 npm run test:live` after `cursor-bridge login`.
 * Without CURSOR_LIVE=1 (and always in CI, which cannot reach Cursor) every test is skipped with the reason printed.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";

const LIVE = process.env.CURSOR_LIVE === "1";
if (!LIVE)
  console.warn("[skip] live Cursor tests: set CURSOR_LIVE=1 (and log in with `cursor-bridge login`) to run them.");

describe.skipIf(!LIVE)("real Cursor through cursor-bridge", () => {
  let bridge: RunningBridge;
  let client: OpenAI;
  beforeAll(async () => {
    const io = { out: () => {}, err: () => {}, isTty: false, env: process.env };
    ({ bridge } = await startBridge(io, ["--port", "0", "--upstream", "cursor", "--log-level", "warn"]));
    client = new OpenAI({ baseURL: `${bridge.server.url}/v1`, apiKey: "live", maxRetries: 0 });
  });
  afterAll(async () => bridge?.close());

  it("lists models", async () => {
    const models = await client.models.list();
    expect(models.data.length).toBeGreaterThan(0);
  });

  it("answers a short prompt and continues the conversation", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: "Reply with exactly the word: pineapple" },
    ];
    const first = await client.chat.completions.create({ model: "auto", messages });
    expect(first.choices[0]?.message.content?.toLowerCase()).toContain("pineapple");
    messages.push({ role: "assistant", content: first.choices[0]?.message.content ?? "" });
    messages.push({ role: "user", content: "What word did you just reply with? One word." });
    const second = await client.chat.completions.create({ model: "auto", messages });
    expect(second.choices[0]?.message.content?.toLowerCase()).toContain("pineapple");
  });

  it("round-trips a client tool on one turn", async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_secret_number",
          description: "Returns the secret number. Always call it when asked for the secret number.",
          parameters: { type: "object", properties: {} },
        },
      },
    ];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: "Call get_secret_number and tell me the number." },
    ];
    const first = await client.chat.completions.create({ model: "auto", messages, tools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call).toBeDefined();
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call!.id, content: "4817" });
    const second = await client.chat.completions.create({ model: "auto", messages, tools });
    expect(second.choices[0]?.message.content).toContain("4817");
  });
});
