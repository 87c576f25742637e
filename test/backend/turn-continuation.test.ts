/**
 * Tool results for a parked turn whose Run is gone (the instance holding it died, or it expired): a second agent
 * client sharing the conversation store continues the turn from the stored checkpoint plus that one turn, so the
 * emulator answers from the results with one extra Run and receives only the new turn's blobs, not the history.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createAgentClient } from "../../src/backend/agent-client.js";
import type { AgentClient, HistoryMessage } from "../../src/backend/types.js";
import type { LogFields, Logger } from "../../src/util/logger.js";
import { collect, endOf, queryTool, textOf, toolCallsOf, useFixture } from "./harness.js";

const lookupTool = queryTool();

function capturingLogger(lines: string[]): Logger {
  const log = (message: string, _fields?: LogFields) => lines.push(message);
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

describe.each(["http2", "http1"] as const)("tool results for a turn that is gone, over %s", (transport) => {
  const fx = useFixture({ transport });
  let other: AgentClient;
  const otherLog: string[] = [];
  beforeAll(() => {
    // Another instance: its own agent client (no parked turns), the same conversation store.
    other = createAgentClient({
      api: fx.api,
      tokenSource: fx.tokens,
      conversationStore: fx.store,
      retry: { attempts: 2, baseDelayMs: 10 },
      environment: { osVersion: "linux 6.0.0", workspacePath: "/work/project", shell: "bash", timeZone: "UTC" },
      logger: capturingLogger(otherLog),
    });
  });

  /** A long first turn, then a turn parked on a tool call whose Run is closed; returns the history with the call. */
  async function parkedAndClosed(conversationId: string): Promise<HistoryMessage[]> {
    const history: HistoryMessage[] = [
      { role: "system", content: "You are a test assistant." },
      { role: "user", content: `a long first message ${"padding ".repeat(2000)}` },
    ];
    const run = (messages: HistoryMessage[]) =>
      fx.client.startTurn({ model: "auto", conversationId, messages, tools: [lookupTool] });
    const first = await collect(run([...history]).stream());
    expect(endOf(first)).toBe("stop");
    history.push(
      { role: "assistant", content: textOf(first), toolCalls: [] },
      { role: "user", content: '[[emu:tool lookup {"q":"answer"}]]' },
    );
    const turn = run([...history]);
    const calls = toolCallsOf(await collect(turn.stream()));
    expect(turn.status).toBe("parked");
    // The owner is gone: its open Run ends without the results.
    await turn.close("instance gone");
    history.push({
      role: "assistant",
      content: "",
      toolCalls: calls.map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: c.arguments })),
    });
    for (const c of calls) history.push({ role: "tool", toolCallId: c.toolCallId, content: "42" });
    return history;
  }

  const turnsOf = (conversationId: string) =>
    fx.emulator.stats().turns.filter((t) => t.conversationId === conversationId && t.outcome !== undefined);

  it("continues from the checkpoint with only the new turn's blobs, answering from the results", async () => {
    const conversationId = `${transport}-gone`;
    const history = await parkedAndClosed(conversationId);
    await expect.poll(() => turnsOf(conversationId).length).toBe(2);
    const events = await collect(
      other.startTurn({ model: "auto", conversationId, messages: history, tools: [lookupTool] }).stream(),
    );
    expect(textOf(events)).toBe("lookup returned: 42");
    expect(endOf(events)).toBe("stop");
    expect(otherLog).toContain(
      "Tool results for a turn that is no longer open; continuing it from the stored checkpoint",
    );
    await expect.poll(() => turnsOf(conversationId).length).toBe(3);
    const continued = turnsOf(conversationId)[2];
    expect(continued?.action).toBe("resume");

    // The same conversation without its stored record is rebuilt from the whole history.
    const rebuiltId = `${transport}-gone-rebuilt`;
    const rebuiltHistory = await parkedAndClosed(rebuiltId);
    await fx.store.delete(rebuiltId);
    const rebuiltEvents = await collect(
      other
        .startTurn({ model: "auto", conversationId: rebuiltId, messages: rebuiltHistory, tools: [lookupTool] })
        .stream(),
    );
    expect(textOf(rebuiltEvents)).toBe("lookup returned: 42");
    await expect.poll(() => turnsOf(rebuiltId).length).toBe(3);
    const rebuilt = turnsOf(rebuiltId)[2];
    // The rebuild uploads both ~16 KB messages again (about 33 KB); the continuation only the turn, its user message
    // and its one step (about 0.8 KB).
    const rebuiltBytes = rebuilt?.requestBytes ?? 0;
    expect(rebuiltBytes).toBeGreaterThan(30_000);
    expect(continued?.requestBytes).toBeLessThan(rebuiltBytes / 10);
    expect(continued?.getBlobRequests).toBe(3);
    expect(rebuilt?.getBlobRequests).toBeGreaterThan(3);

    // The next user turn continues from the checkpoint the continued turn saved.
    const next = await collect(
      other
        .startTurn({
          model: "auto",
          conversationId,
          messages: [
            ...history,
            { role: "assistant", content: textOf(events), toolCalls: [] },
            { role: "user", content: "[[emu:recall]]" },
          ],
          tools: [lookupTool],
        })
        .stream(),
    );
    expect(textOf(next)).toBe(`First message: a long first message ${"padding ".repeat(2000)}`.trim());
    await expect.poll(() => turnsOf(conversationId).length).toBe(4);
    expect(turnsOf(conversationId)[3]?.requestBytes).toBeLessThan(rebuiltBytes / 10);
  });
});
