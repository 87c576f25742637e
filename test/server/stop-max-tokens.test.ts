/**
 * The output cap through the real SDKs, on the emulator (its `[[emu:tokens N]]` answer is "alpha bravo charlie …",
 * one word a delta; `[[emu:think N]]` reasons first): chat `max_tokens` / `max_completion_tokens`, Responses
 * `max_output_tokens` and Messages `max_tokens` end the answer at the cap, counted at 4 characters a token over the
 * text, the tool arguments and the reasoning the client asked for (hidden reasoning leaves the cap to the answer),
 * with each API's "length" ending (finish_reason "length"; status "incomplete" with incomplete_details.reason
 * "max_output_tokens"; stop_reason "max_tokens"), streamed and not; a cap larger than the answer changes nothing; a
 * tool call that starts within the cap streams and goes out whole, one that would start past it is not sent at all.
 */
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { sdkClients, useSdkStack } from "../support/sdk-clients.js";
import { startStack } from "../support/stack.js";

const TWENTY = "Count [[emu:tokens 20]]";
/** Two tokens of the estimate: 8 characters. */
const CUT = "alpha br";

describe("the output cap against cursor-bridge + emulator", () => {
  const sdk = useSdkStack();

  it("chat: max_tokens cuts a streamed answer with finish_reason length, and warns no more", async () => {
    const { data, response } = await sdk.openai.chat.completions
      .create({ model: "auto", stream: true, max_tokens: 2, messages: [{ role: "user", content: TWENTY }] })
      .withResponse();
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of data) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(CUT);
    expect(finish).toBe("length");
    expect(response.headers.get("x-cursor-bridge-warnings") ?? "").not.toContain("max_tokens");
  });

  it("chat: max_completion_tokens cuts a JSON answer; the conversation goes on from the cut answer", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: TWENTY }];
    const cut = await sdk.openai.chat.completions.create({ model: "auto", max_completion_tokens: 2, messages });
    expect(cut.choices[0]?.message.content).toBe(CUT);
    expect(cut.choices[0]?.finish_reason).toBe("length");
    messages.push(cut.choices[0]!.message, { role: "user", content: "Again [[emu:recall]]" });
    const next = await sdk.openai.chat.completions.create({ model: "auto", max_tokens: 100, messages });
    expect(next.choices[0]?.message.content).toBe("First message: Count");
    expect(next.choices[0]?.finish_reason).toBe("stop");
  });

  it("chat: a cap larger than the answer changes nothing (and is no longer reported as unenforced)", async () => {
    const { data: whole, response } = await sdk.openai.chat.completions
      .create({ model: "auto", max_tokens: 1000, messages: [{ role: "user", content: TWENTY }] })
      .withResponse();
    expect(response.headers.get("x-cursor-bridge-warnings")).toBeNull();
    expect(whole.choices[0]?.message.content?.trim().split(" ")).toHaveLength(20);
    expect(whole.choices[0]?.finish_reason).toBe("stop");
    expect(whole.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("responses: max_output_tokens ends the response incomplete (max_output_tokens), streamed and not", async () => {
    const ask = { model: "auto", store: false, input: TWENTY, max_output_tokens: 2 };
    const { data, response } = await sdk.openai.responses.create(ask).withResponse();
    expect(data.output_text).toBe(CUT);
    expect(data.status).toBe("incomplete");
    expect(data.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.headers.get("x-cursor-bridge-warnings") ?? "").not.toContain("max_output_tokens");
    expect(response.headers.get("x-cursor-bridge-ignored-params") ?? "").not.toContain("max_output_tokens");
    const kinds: string[] = [];
    let text = "";
    for await (const event of await sdk.openai.responses.create({ ...ask, stream: true })) {
      kinds.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.incomplete") {
        expect(event.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
      }
    }
    expect(text).toBe(CUT);
    expect(kinds.at(-1)).toBe("response.incomplete");
    const whole = await sdk.openai.responses.create({ ...ask, max_output_tokens: 1000 });
    expect(whole.status).toBe("completed");
    expect(whole.output_text.trim().split(" ")).toHaveLength(20);
  });

  it("messages: max_tokens ends the message with stop_reason max_tokens, streamed and not", async () => {
    const ask = { model: "auto", max_tokens: 2, messages: [{ role: "user" as const, content: TWENTY }] };
    const streamed = await sdk.anthropic.messages.stream(ask).finalMessage();
    expect(streamed.content).toEqual([{ type: "text", text: CUT }]);
    expect(streamed).toMatchObject({ stop_reason: "max_tokens", stop_sequence: null });
    const { data, response } = await sdk.anthropic.messages.create(ask).withResponse();
    expect(data.content).toEqual([{ type: "text", text: CUT }]);
    expect(data.stop_reason).toBe("max_tokens");
    expect(response.headers.get("x-cursor-bridge-ignored-params") ?? "").not.toContain("max_tokens");
    const whole = await sdk.anthropic.messages.create({ ...ask, max_tokens: 1000 });
    expect(whole.stop_reason).toBe("end_turn");
    expect(whole.content[0]?.type === "text" && whole.content[0].text.trim().split(" ")).toHaveLength(20);
  });

  it("a cut answer reports its usage by estimate on every door (Cursor counts a turn only when it ends)", async () => {
    // The 8 characters handed out are 2 tokens; the input is the request's estimate, never 0.
    const stream = await sdk.openai.chat.completions.create({
      model: "auto",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 2,
      messages: [{ role: "user", content: TWENTY }],
    });
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.completion_tokens).toBe(2);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + 2);
    const json = await sdk.openai.chat.completions.create({
      model: "auto",
      max_tokens: 2,
      messages: [{ role: "user", content: TWENTY }],
    });
    expect(json.usage).toMatchObject({ completion_tokens: 2, prompt_tokens: usage?.prompt_tokens });
    const stopped = await sdk.openai.chat.completions.create({
      model: "auto",
      stop: ["charlie"],
      messages: [{ role: "user", content: TWENTY }],
    });
    // "alpha bravo " is 12 characters: 3 tokens.
    expect(stopped.usage).toMatchObject({ completion_tokens: 3, prompt_tokens: usage?.prompt_tokens });
    const response = await sdk.openai.responses.create({ model: "auto", input: TWENTY, max_output_tokens: 2 });
    expect(response.usage?.output_tokens).toBe(2);
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    const ask = { model: "auto", max_tokens: 2, messages: [{ role: "user" as const, content: TWENTY }] };
    const message = await sdk.anthropic.messages.stream(ask).finalMessage();
    expect(message.usage.output_tokens).toBe(2);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
  });

  it("reasoning the client did not ask for leaves the cap to the visible answer, on every door", async () => {
    // A 20-token title from a thinking model: "thought1 … thought30" (~270 characters, ~68 tokens of the estimate)
    // before a 5-word answer (~30 characters). Hidden reasoning does not count: the title comes whole.
    const content = "Title [[emu:think 30]] [[emu:tokens 5]]";
    const messages = [{ role: "user" as const, content }];
    for (const cap of [{ max_tokens: 20 }, { max_completion_tokens: 20 }]) {
      const chat = await sdk.openai.chat.completions.create({ model: "auto", ...cap, messages });
      expect(chat.choices[0]?.finish_reason).toBe("stop");
      expect(chat.choices[0]?.message.content?.trim().split(" ")).toHaveLength(5);
      // The usage stays Cursor's: the reasoning is counted (and billed), only not against the cap.
      expect(chat.usage?.completion_tokens_details?.reasoning_tokens).toBe(30);
      expect(chat.usage?.completion_tokens).toBeGreaterThan(20);
    }
    let streamed = "";
    let finish: string | null | undefined;
    for await (const chunk of await sdk.openai.chat.completions.create({
      model: "auto",
      stream: true,
      max_tokens: 20,
      messages,
    })) {
      streamed += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("stop");
    expect(streamed.trim().split(" ")).toHaveLength(5);
    const response = await sdk.openai.responses.create({
      model: "auto",
      store: false,
      input: content,
      max_output_tokens: 20,
    });
    expect(response.status).toBe("completed");
    expect(response.output_text.trim().split(" ")).toHaveLength(5);
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(30);
    const message = await sdk.anthropic.messages.create({ model: "auto", max_tokens: 20, messages });
    expect(message.stop_reason).toBe("end_turn");
    expect(message.content).toEqual([{ type: "text", text: expect.stringMatching(/^(\S+ ){4}\S+\s*$/) }]);
    expect(message.usage.output_tokens).toBeGreaterThan(20);
  });

  it("reasoning the client asked for counts toward the cap, as OpenAI's and Anthropic's caps count it", async () => {
    // "thought1 … thought7" is far more than 3 tokens' 12 characters; the answer's one word alone would fit.
    const content = "Think [[emu:think 7]] [[emu:tokens 1]]";
    const messages = [{ role: "user" as const, content }];
    const shown = await sdk.anthropic.messages
      .stream({ model: "auto", max_tokens: 3, thinking: { type: "adaptive" }, messages })
      .finalMessage();
    expect(shown.stop_reason).toBe("max_tokens");
    expect(shown.content).toEqual([expect.objectContaining({ type: "thinking", thinking: "thought1 tho" })]);
    const roomy = await sdk.anthropic.messages.create({
      model: "auto",
      max_tokens: 100,
      thinking: { type: "adaptive" },
      messages,
    });
    expect(roomy.stop_reason).toBe("end_turn");
    const chat = await sdk.openai.chat.completions.create({
      model: "auto",
      max_tokens: 3,
      reasoning_effort: "low",
      messages,
    });
    expect(chat.choices[0]?.finish_reason).toBe("length");
    expect(chat.choices[0]?.message.content ?? "").toBe("");
    const response = await sdk.openai.responses.create({
      model: "auto",
      store: false,
      input: content,
      max_output_tokens: 3,
      reasoning: { effort: "low", summary: "auto" },
    });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.output_text).toBe("");
    // Anthropic's extended thinking with a budget: max_tokens (above the budget, as Anthropic requires) includes it.
    const long = "Think long [[emu:think 600]] [[emu:tokens 5]]";
    const budgeted = await sdk.anthropic.messages.create({
      model: "auto",
      max_tokens: 1100,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: long }],
    });
    expect(budgeted.stop_reason).toBe("max_tokens");
    expect(budgeted.content.map((block) => block.type)).toEqual(["thinking"]);
    const unasked = await sdk.anthropic.messages.create({
      model: "auto",
      max_tokens: 1100,
      messages: [{ role: "user", content: long }],
    });
    expect(unasked.stop_reason).toBe("end_turn");
    expect(unasked.content.map((block) => block.type)).toEqual(["text"]);
  });

  it("chat: reasoning in content (--reasoning-output think-tags) is visible text, so it counts", async () => {
    const tagged = await startStack({ app: { reasoningOutput: "think-tags" } });
    try {
      const { openai: client } = sdkClients(tagged.baseURL);
      const chat = await client.chat.completions.create({
        model: "auto",
        max_tokens: 3,
        messages: [{ role: "user", content: "Think [[emu:think 7]] [[emu:tokens 1]]" }],
      });
      expect(chat.choices[0]?.finish_reason).toBe("length");
      // The reasoning filled the cap: the tag is closed, no answer text follows.
      expect(chat.choices[0]?.message.content).toMatch(/^<think>thought1 tho<\/think>\s*$/);
    } finally {
      await tagged.close();
    }
  });

  it("a tool call that would start past the cap is not sent: the answer ends before it, streamed and not", async () => {
    const tools = [{ name: "lookup", input_schema: { type: "object" as const } }];
    const content = `[[emu:think 3]] [[emu:tool lookup {"query":"${"x".repeat(60)}"}]]`;
    // The reasoning the client asked for ("thought1 thought2 thought3") fills the 1-token cap (4 characters) before
    // the call starts.
    const thinking = { type: "adaptive" as const };
    const ask = { model: "auto", max_tokens: 1, thinking, tools, messages: [{ role: "user" as const, content }] };
    const events: string[] = [];
    const stream = sdk.anthropic.messages.stream(ask);
    stream.on("streamEvent", (event) => events.push(event.type === "content_block_delta" ? event.delta.type : ""));
    const streamed = await stream.finalMessage();
    expect(streamed.stop_reason).toBe("max_tokens");
    expect(streamed.content.map((block) => block.type)).not.toContain("tool_use");
    expect(events).not.toContain("input_json_delta");
    const json = await sdk.anthropic.messages.create(ask);
    expect(json.stop_reason).toBe("max_tokens");
    expect(json.content.map((block) => block.type)).not.toContain("tool_use");
    // A call that starts within the cap goes out whole, streamed, though its arguments pass the cap (5 tokens).
    const started = sdk.anthropic.messages.stream({
      ...ask,
      max_tokens: 5,
      messages: [{ role: "user", content: `[[emu:tool lookup {"query":"${"x".repeat(60)}"}]]` }],
    });
    const deltas: string[] = [];
    started.on("streamEvent", (event) => event.type === "content_block_delta" && deltas.push(event.delta.type));
    const whole = await started.finalMessage();
    expect(whole.content.at(-1)).toMatchObject({ type: "tool_use", input: { query: "x".repeat(60) } });
    expect(deltas).toContain("input_json_delta");
    // With room for it, the call goes out whole.
    const fits = await sdk.anthropic.messages.create({ ...ask, max_tokens: 100 });
    expect(fits.stop_reason).toBe("tool_use");
    expect(fits.content.at(-1)).toMatchObject({ type: "tool_use", input: { query: "x".repeat(60) } });
    const chat = await sdk.openai.chat.completions.create({
      model: "auto",
      max_tokens: 1,
      reasoning_effort: "low",
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      messages: [{ role: "user", content }],
    });
    expect(chat.choices[0]?.finish_reason).toBe("length");
    expect(chat.choices[0]?.message.tool_calls ?? []).toEqual([]);
  });
});
