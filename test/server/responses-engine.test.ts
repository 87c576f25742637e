/**
 * Issue 14 against the real `openai` SDK on the real stack: `/v1/responses` → engine → agent client → emulator.
 * Tool round trips stay on one Cursor Run; Codex-style `store: false` conversations re-sent in full continue from the
 * checkpoint (flat upload); `previous_response_id` continues from the stored response.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const lookup: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "lookup",
  description: "Look something up",
  strict: false,
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
};

describe("openai SDK responses client against cursor-bridge + engine + emulator", () => {
  const sdk = useSdkStack();

  it("answers non-streaming and streaming requests", async () => {
    const response = await sdk.openai.responses.create({ model: "auto", input: "Hello responses" });
    expect(response.output_text).toBe("You said: Hello responses");
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    const stream = await sdk.openai.responses.create({ model: "auto", input: "Hello stream", stream: true });
    let text = "";
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(text).toBe("You said: Hello stream");
    expect(types.filter((type) => type === "response.output_text.delta").length).toBeGreaterThan(1);
    expect(types.at(-1)).toBe("response.completed");
  });

  it("a tool round trip with previous_response_id stays on one Cursor Run", async () => {
    sdk.stack.emulator.resetStats();
    const first = await sdk.openai.responses.create({
      model: "auto",
      tools: [lookup],
      input: 'Look it up [[emu:tool lookup {"q":"otters"}]]',
    });
    const call = first.output.find((item) => item.type === "function_call");
    if (call?.type !== "function_call") throw new Error(`no function call: ${JSON.stringify(first.output)}`);
    expect(JSON.parse(call.arguments)).toEqual({ q: "otters" });
    const second = await sdk.openai.responses.create({
      model: "auto",
      tools: [lookup],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "otters hold hands" }],
    });
    expect(second.output_text).toContain("lookup returned: otters hold hands");
    expect(sdk.stack.emulator.stats().runStreams).toBe(1);
  });

  it("a store:false tool round trip with the whole history re-sent stays on one Cursor Run", async () => {
    sdk.stack.emulator.resetStats();
    const input: OpenAI.Responses.ResponseInput = [
      { type: "message", role: "developer", content: "You are terse." },
      { type: "message", role: "user", content: 'Find [[emu:tool lookup {"q":"x"}]]' },
    ];
    const stream = await sdk.openai.responses.create({
      model: "auto",
      tools: [lookup],
      input,
      store: false,
      stream: true,
    });
    const items: OpenAI.Responses.ResponseOutputItem[] = [];
    for await (const event of stream) if (event.type === "response.output_item.done") items.push(event.item);
    const call = items.find((item) => item.type === "function_call");
    if (call?.type !== "function_call") throw new Error("no function call streamed");
    input.push(...(items as OpenAI.Responses.ResponseInputItem[]));
    input.push({ type: "function_call_output", call_id: call.call_id, output: "42" });
    const second = await sdk.openai.responses.create({ model: "auto", tools: [lookup], input, store: false });
    expect(second.output_text).toContain("lookup returned: 42");
    expect(sdk.stack.emulator.stats().runStreams).toBe(1);
    await expect(sdk.openai.responses.retrieve(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("a store:false conversation re-sent in full continues from the checkpoint: flat upload, memory from state", async () => {
    sdk.stack.emulator.resetStats();
    const input: OpenAI.Responses.ResponseInputItem[] = [];
    const padding = "with padding to look like a real conversation ".repeat(4);
    const say = async (text: string) => {
      input.push({ type: "message", role: "user", content: text });
      const reply = await sdk.openai.responses.create({ model: "auto", input, store: false });
      input.push(...(reply.output as OpenAI.Responses.ResponseInputItem[]));
      return reply.output_text;
    };
    await say("My first message is about otters");
    for (let i = 2; i <= 6; i++) await say(`Turn ${i} ${padding}`);
    expect(await say("[[emu:recall]] what did I say first?")).toContain(
      "First message: My first message is about otters",
    );
    const turns = sdk.stack.emulator.stats().turns;
    expect(turns).toHaveLength(7);
    expect(new Set(turns.map((turn) => turn.conversationId)).size).toBe(1);
    const second = turns[1]?.requestBytes ?? 0;
    const last = turns[6]?.requestBytes ?? 0;
    // Replay would re-send ≈200 bytes of history per turn; continuation adds one turn blob id (+ framing) per turn.
    expect((last - second) / 5).toBeLessThanOrEqual(40);
    expect(last).toBeLessThan(JSON.stringify(input).length);
  });

  it("a thinking model's reasoning comes back as the bridge's encrypted_content and continues the conversation", async () => {
    sdk.stack.emulator.resetStats();
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Ponder [[emu:think 4]]" }];
    const request: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "input"> = {
      model: "claude-4.5-sonnet-thinking",
      store: false,
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    };
    const first = await sdk.openai.responses.create({ ...request, input });
    const reasoning = first.output.find((item) => item.type === "reasoning");
    if (reasoning?.type !== "reasoning") throw new Error(`no reasoning item: ${JSON.stringify(first.output)}`);
    expect(reasoning.summary[0]?.text.length).toBeGreaterThan(0);
    expect(reasoning.encrypted_content).toMatch(/^cbr1\./);
    // Codex re-sends the items with fresh ids; the conversation must still continue from its checkpoint.
    const echoed = (first.output as OpenAI.Responses.ResponseInputItem[]).map((item) => ({
      ...item,
      id: `x_${Math.random()}`,
    }));
    input.push(...echoed, { role: "user", content: "[[emu:recall]] and now?" });
    const second = await sdk.openai.responses.create({ ...request, input });
    expect(second.output_text).toContain("First message: Ponder");
    const turns = sdk.stack.emulator.stats().turns;
    expect(turns).toHaveLength(2);
    expect(turns[1]?.conversationId).toBe(turns[0]?.conversationId);
  });

  it("previous_response_id continues the stored conversation; an unknown one is a 400", async () => {
    const first = await sdk.openai.responses.create({ model: "auto", input: "Remember badgers" });
    const second = await sdk.openai.responses.create({
      model: "auto",
      previous_response_id: first.id,
      input: "[[emu:recall]] what was first?",
    });
    expect(second.output_text).toContain("First message: Remember badgers");
    const missing = await sdk.openai.responses
      .create({ model: "auto", input: "x", previous_response_id: "resp_unknown" })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
    expect(missing).toMatchObject({ code: "previous_response_not_found", param: "previous_response_id" });
  });

  it("an unknown model is a 404 model_not_found", async () => {
    const error = await sdk.openai.responses.create({ model: "no-such-model", input: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ code: "model_not_found" });
  });
});
