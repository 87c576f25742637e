/**
 * Parameters the bridge accepts without effect (Cursor's agent API has no equivalent: `temperature`, `seed`, …) keep
 * the real API's types and ranges on every HTTP door: a wrong one is a 400 in the door's own error shape naming the
 * field, before any Run, as OpenAI or Anthropic would answer; a valid one goes through and is listed as ignored.
 */
import { describe, expect, it } from "vitest";
import { appWithRecorder, HTTP_DOORS, type HttpDoor, send } from "./doors.js";

/** Per door: wrongly typed or out-of-range ignored parameters, each with the field its error must name. */
const WRONG: Record<string, Array<[Record<string, unknown>, string]>> = {
  chat: [
    [{ temperature: "hot" }, "temperature"],
    [{ seed: "x" }, "seed"],
    [{ top_p: 2 }, "top_p"],
    [{ logit_bias: { "50256": "ban" } }, "logit_bias.50256"],
  ],
  messages: [
    [{ temperature: "hot" }, "temperature"],
    [{ temperature: 1.5 }, "temperature"],
    [{ top_k: "x" }, "top_k"],
    [{ stop_sequences: "END" }, "stop_sequences"],
    [{ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 512 } }, "thinking.budget_tokens"],
  ],
  responses: [
    [{ temperature: "hot" }, "temperature"],
    [{ top_p: -1 }, "top_p"],
    [{ text: { format: { type: "json_schema", name: "answer" } } }, "text.format.schema"],
  ],
};

/** Per door: the same parameters with valid values, as SDKs send them. */
const VALID: Record<string, Record<string, unknown>> = {
  chat: { temperature: 0.2, seed: 7, top_p: 1, logit_bias: { "50256": -100 }, frequency_penalty: null },
  messages: { temperature: 1, top_k: 5, stop_sequences: ["END"], metadata: { user_id: "u" } },
  responses: { temperature: 2, top_p: 0.5, text: { format: { type: "json_schema", name: "a", schema: {} } } },
};

describe.each(HTTP_DOORS.map((door) => [door.name, door] as const))("%s door", (_name, door: HttpDoor) => {
  it.each(WRONG[door.name] ?? [])(
    "refuses %j naming %s, in the door's own shape, before any Run",
    async (extra, field) => {
      const target = appWithRecorder();
      const answer = await send(door, target, { ...door.basic("auto"), ...extra });
      expect(answer.status).toBe(400);
      // OpenAI's shape names the field in `param`, Anthropic's in the message (errorOf reads each).
      if (door.shape === "openai") expect(answer.error?.field).toBe(field);
      else expect(answer.error?.message.startsWith(`${field}: `)).toBe(true);
      expect(target.runs).toHaveLength(0);
    },
  );

  it("accepts the valid values and lists them as ignored", async () => {
    const target = appWithRecorder();
    const extra = VALID[door.name] ?? {};
    const response = await target.app.request(door.path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...door.basic("auto"), ...extra }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const ignored = response.headers.get("x-cursor-bridge-ignored-params")?.split(",") ?? [];
    expect(ignored).toEqual(expect.arrayContaining(["temperature"]));
    expect(target.runs).toHaveLength(1);
  });
});
