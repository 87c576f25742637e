/**
 * Stop sequences through the real SDKs, on the emulator (its `[[emu:tokens N]]` answer is "alpha bravo charlie …",
 * one word a delta): chat `stop` and Messages `stop_sequences` cut the answer before the first sequence found, split
 * across deltas or not, streamed and not, with OpenAI's `finish_reason: "stop"` and Anthropic's `stop_reason:
 * "stop_sequence"` naming it; the upstream turn is released there, and the conversation goes on from the cut answer.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const TWENTY = "Count [[emu:tokens 20]]";

describe("stop sequences against cursor-bridge + emulator", () => {
  const sdk = useSdkStack();

  it("a list longer than 128 sequences or one over 1,000 characters is a 400 naming the field, in each door's shape", async () => {
    const many = Array.from({ length: 129 }, (_, i) => `s${i}`);
    const long = "x".repeat(1001);
    for (const stop of [many, long, [long]]) {
      const error = await sdk.openai.chat.completions
        .create({ model: "auto", stop, messages: [{ role: "user", content: TWENTY }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toMatch(/^stop/);
    }
    for (const stop_sequences of [many, [long]]) {
      const error = await sdk.anthropic.messages
        .create({ model: "auto", max_tokens: 100, stop_sequences, messages: [{ role: "user", content: TWENTY }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(String((error as Error).message)).toContain("stop_sequences");
    }
    // At the bounds, served.
    const edge = await sdk.openai.chat.completions.create({
      model: "auto",
      stop: [...many.slice(0, 127), "x".repeat(1000)],
      messages: [{ role: "user", content: TWENTY }],
    });
    expect(edge.choices[0]?.finish_reason).toBe("stop");
  });

  it("chat: cuts a streamed answer before a sequence split across deltas", async () => {
    const { data, response } = await sdk.openai.chat.completions
      .create({ model: "auto", stream: true, stop: ["zulu", "pha bra"], messages: [{ role: "user", content: TWENTY }] })
      .withResponse();
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of data) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe("al");
    expect(finish).toBe("stop");
    expect(response.headers.get("x-cursor-bridge-warnings") ?? "").not.toContain("stop");
  });

  it("chat: cuts a non-streamed answer and continues the conversation from the cut answer", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: TWENTY }];
    const cut = await sdk.openai.chat.completions.create({ model: "auto", stop: "delta", messages });
    expect(cut.choices[0]?.message.content).toBe("alpha bravo charlie ");
    expect(cut.choices[0]?.finish_reason).toBe("stop");
    const stream = sdk.openai.chat.completions.stream({ model: "auto", stop: "delta", messages });
    expect((await stream.finalChatCompletion()).choices[0]?.message.content).toBe("alpha bravo charlie ");
    messages.push(cut.choices[0]!.message, { role: "user", content: "Again [[emu:recall]]" });
    const next = await sdk.openai.chat.completions.create({ model: "auto", messages });
    expect(next.choices[0]?.message.content).toBe(`First message: Count`);
    // A sequence the answer never holds changes nothing.
    const whole = await sdk.openai.chat.completions.create({ model: "auto", stop: ["zulu"], messages: [messages[0]!] });
    expect(whole.choices[0]?.message.content?.split(" ")).toHaveLength(20);
  });

  it("messages: stop_reason stop_sequence and the sequence, streamed and not", async () => {
    const ask = { model: "auto", max_tokens: 100, messages: [{ role: "user" as const, content: TWENTY }] };
    const streamed = await sdk.anthropic.messages
      .stream({ ...ask, stop_sequences: ["echo", "charlie"] })
      .finalMessage();
    expect(streamed.content).toEqual([{ type: "text", text: "alpha bravo " }]);
    expect(streamed).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "charlie" });
    const { data, response } = await sdk.anthropic.messages.create({ ...ask, stop_sequences: ["golf"] }).withResponse();
    expect(data.content).toEqual([{ type: "text", text: "alpha bravo charlie delta echo foxtrot " }]);
    expect(data).toMatchObject({ stop_reason: "stop_sequence", stop_sequence: "golf" });
    expect(response.headers.get("x-cursor-bridge-ignored-params") ?? "").not.toContain("stop_sequences");
    const whole = await sdk.anthropic.messages.create({ ...ask, stop_sequences: ["zulu"] });
    expect(whole).toMatchObject({ stop_reason: "end_turn", stop_sequence: null });
  });

  it("messages: a tool call is not cut, and reasoning is not searched", async () => {
    const message = await sdk.anthropic.messages.create({
      model: "auto",
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      stop_sequences: ["thought1", "lookup"],
      tools: [{ name: "lookup", input_schema: { type: "object" } }],
      messages: [{ role: "user", content: 'Go [[emu:think 2]] [[emu:tool lookup {"k":"lookup"}]]' }],
    });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    expect(message.content[0]).toMatchObject({ thinking: "thought1 thought2" });
  });
});
