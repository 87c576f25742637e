/**
 * Connections to Cursor under a server that caps its streams (docs/protocol.md §4.2): with the emulator at
 * `--max-concurrent-streams 10`, 30 turns parked on tool calls (each holds its Run's stream open) fill three HTTP/2
 * connections; ten new turns open a fourth and complete; a connection that drops fails only the turns on it (those
 * whose clients have received nothing are retried and answered 200), and the 30 parked turns, on the other
 * connections, resume on their open Runs afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const MAX_STREAMS = 10;
const PARKED = 30;
const TOOLS = [
  {
    type: "function",
    function: {
      name: "lookup",
      description: "Looks a key up.",
      parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
    },
  },
];

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}
interface Answer {
  status: number;
  body: {
    choices?: Array<{ message: { content: string | null; tool_calls?: ToolCall[] }; finish_reason: string }>;
    error?: { code: string };
  };
}

describe("HTTP/2 connection pool against a server capping its streams", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      transport: "http2",
      parkedTurnTtlMs: 10 * 60_000,
      emulator: { maxConcurrentStreams: MAX_STREAMS },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const chat = async (messages: unknown[]): Promise<Answer> => {
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", messages, tools: TOOLS }),
    });
    return { status: res.status, body: (await res.json()) as Answer["body"] };
  };
  /** Open streams per HTTP/2 connection to the emulator. */
  const loads = () => stack.api.http2Loads?.()[stack.emulator.url] ?? [];

  it("30 parked turns and 10 new ones all complete, and a drop leaves the other connections' turns untouched", async () => {
    // The model list is fetched (a unary call, briefly a stream of its own) before the turns, not among them.
    expect((await fetch(`${stack.baseURL}/models`)).status).toBe(200);
    // 30 turns park on a tool call each: their Runs stay open, ten per connection.
    const asks = Array.from({ length: PARKED }, (_, i) => ({
      role: "user",
      content: `[[emu:tool lookup {"key":"k${i}"}]] parked ${i}`,
    }));
    const parked = await Promise.all(asks.map((ask) => chat([ask])));
    for (const answer of parked) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.choices?.[0]?.finish_reason).toBe("tool_calls");
    }
    expect(stack.parked.size()).toBe(PARKED);
    expect(loads().filter((load) => load > 0)).toEqual([10, 10, 10]);

    // Ten new turns: none can go on the full connections, so a fourth opens; all complete.
    const fresh = await Promise.all(
      Array.from({ length: 10 }, (_, i) => chat([{ role: "user", content: `new turn ${i}` }])),
    );
    for (const [i, answer] of fresh.entries()) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.choices?.[0]?.message.content).toContain(`new turn ${i}`);
    }

    // Five paced answers and a turn whose connection drops: they land on a connection with room (not one of the
    // three full ones), and the drop takes only that connection down. The five, whose clients have received nothing
    // yet, are retried on connections of their own.
    const runsBeforeDrop = stack.emulator.stats().runStreams;
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
    const victims = Array.from({ length: 5 }, (_, i) =>
      chat([{ role: "user", content: `[[emu:rate 20]] victim ${i} ${words}` }]),
    );
    await expect.poll(() => stack.emulator.stats().runStreams, { timeout: 20_000 }).toBe(runsBeforeDrop + 5);
    expect(loads().filter((load) => load > 0)).toEqual([10, 10, 10, 5]);
    const dropped = await chat([{ role: "user", content: "[[emu:drop 0]] goes down" }]);
    expect(dropped.status).toBe(503);
    expect(dropped.body.error?.code).toBe("upstream_unavailable");
    for (const [i, answer] of (await Promise.all(victims)).entries()) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.choices?.[0]?.message.content).toBe(`You said: victim ${i} ${words}`);
    }
    expect(stack.parked.size()).toBe(PARKED);
    expect(loads().filter((load) => load > 0)).toEqual([10, 10, 10]);

    // Every parked turn resumes on its open Run: no new Run is opened for any of them.
    const runsBefore = stack.emulator.stats().runStreams;
    const resumed = await Promise.all(
      parked.map((answer, i) => {
        const call = answer.body.choices?.[0]?.message.tool_calls?.[0] as ToolCall;
        return chat([
          asks[i],
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: call.id, content: `value ${i}` },
        ]);
      }),
    );
    for (const [i, answer] of resumed.entries()) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.choices?.[0]?.message.content).toContain(`lookup returned: value ${i}`);
    }
    expect(stack.emulator.stats().runStreams).toBe(runsBefore);
    expect(stack.parked.size()).toBe(0);
  }, 120_000);
});
