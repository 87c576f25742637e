/**
 * The agent client against the emulator, over both transports: echo, tool round trips on one
 * Run, parallel calls, native redirect/rejection, flat upload over ten turns, Blob-not-found recovery, stall, cancel,
 * 100 concurrent conversations, parked-turn expiry and refresh-on-unauthenticated.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EXPIRED_REASON } from "../../src/backend/agent-turn.js";
import type { ClientTool, HistoryMessage } from "../../src/backend/types.js";
import { ConversationStateStructureSchema } from "../../src/gen/agent/v1/conversation_state_pb.js";
import { toHex } from "../../src/stores/blob-id.js";
import { ProxyError } from "../../src/util/errors.js";
import {
  collect,
  collectUntilFailure,
  endOf,
  type FixtureParts,
  queryTool,
  startFixture,
  textOf,
  toolCallsOf,
  useFixture,
  userTurn,
} from "./harness.js";

const lookupTool = queryTool();
const readTool: ClientTool = {
  name: "read",
  description: "Reads a file.",
  inputSchema: { type: "object", properties: { filePath: { type: "string" } }, required: ["filePath"] },
};

/** Polls until `check` holds (emulator stats settle asynchronously); fails after ~2 s. */
async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(check()).toBe(true);
}

const runCount = (fx: FixtureParts) => {
  const stats = fx.emulator.stats();
  return stats.runStreams + stats.runSseStreams;
};

describe.each(["http2", "http1"] as const)("agent client over %s", (transport) => {
  const fx = useFixture({ transport });

  it("streams an echo reply and ends with stop", async () => {
    const events = await collect(fx.client.startTurn(userTurn(`${transport}-echo`, "hello")).stream());
    expect(textOf(events)).toBe("You said: hello");
    expect(endOf(events)).toBe("stop");
    expect(events.some((e) => e.type === "checkpoint")).toBe(true);
    const usage = events.find((e) => e.type === "usage");
    expect(usage?.type === "usage" && usage.usage.outputTokens > 0).toBe(true);
  });

  it("saves the checkpoint under the caller's history key instead of hashing the history again", async () => {
    const request = userTurn(`${transport}-keys`, "hello");
    const keys = request.messages.map((_, i) => `caller-key-${i}`);
    await collect(fx.client.startTurn({ ...request, historyKeys: keys }).stream());
    const record = await fx.store.load(request.conversationId);
    expect(record?.fingerprint).toBe(keys.at(-1));
  });

  it("parks on a client tool call and resumes on the same Run", async () => {
    fx.emulator.resetStats();
    const turn = fx.client.startTurn(
      userTurn(`${transport}-tool`, '[[emu:tool lookup {"q":"answer"}]]', { tools: [lookupTool] }),
    );
    const first = await collect(turn.stream());
    const calls = toolCallsOf(first);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.toolName).toBe("lookup");
    expect(JSON.parse(calls[0]?.arguments ?? "")).toEqual({ q: "answer" });
    expect(endOf(first)).toBe("tool-calls");
    expect(turn.status).toBe("parked");
    expect(turn.pendingToolCallIds).toEqual([calls[0]?.toolCallId]);
    const second = await collect(
      turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "42", isError: false }]),
    );
    expect(textOf(second)).toBe("lookup returned: 42");
    expect(endOf(second)).toBe("stop");
    expect(turn.status).toBe("ended");
    expect(runCount(fx)).toBe(1);
  });

  it("batches two parallel tool calls into one segment", async () => {
    const text = '[[emu:tool lookup {"q":"a"}]] [[emu:tool lookup {"q":"b"}]]';
    const turn = fx.client.startTurn(userTurn(`${transport}-parallel`, text, { tools: [lookupTool] }));
    const calls = toolCallsOf(await collect(turn.stream()));
    expect(calls.map((c) => JSON.parse(c.arguments))).toEqual([{ q: "a" }, { q: "b" }]);
    expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(2);
    const results = calls.map((c, i) => ({ toolCallId: c.toolCallId, content: `r${i}`, isError: false }));
    const second = await collect(turn.resume(results));
    expect(textOf(second)).toBe("lookup returned: r0\nlookup returned: r1");
  });

  it("redirects a native read to the client's read tool", async () => {
    const text = '[[emu:native read {"path":"/work/project/a.txt"}]]';
    const turn = fx.client.startTurn(userTurn(`${transport}-native`, text, { tools: [readTool] }));
    const calls = toolCallsOf(await collect(turn.stream()));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.toolName).toBe("read");
    expect(JSON.parse(calls[0]?.arguments ?? "")).toEqual({ filePath: "/work/project/a.txt" });
    const second = await collect(
      turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "file body", isError: false }]),
    );
    expect(textOf(second)).toContain("file body");
    expect(endOf(second)).toBe("stop");
  });

  it("ends a parked turn whose call Cursor aborts before its result, and saves nothing Cursor says after", async () => {
    fx.emulator.resetStats();
    // The emulator aborts the exec the caller holds while the turn is parked, then goes on answering from the abort.
    const conversationId = `${transport}-aborted`;
    const text = '[[emu:native read {"path":"/work/project/a.txt"}]] [[emu:abort-exec 1000]]';
    const turn = fx.client.startTurn(userTurn(conversationId, text, { tools: [readTool] }));
    const first = await collect(turn.stream());
    const calls = toolCallsOf(first);
    expect(calls).toHaveLength(1);
    // The caller holds the call, so the segment ends with it (a reply ending in "stop" would leave it unanswered).
    expect(endOf(first)).toBe("tool-calls");
    expect(textOf(first)).toBe("");
    expect(turn.status).toBe("parked");
    const parkedAt = await fx.store.load(conversationId);
    let ended = false;
    turn.onEnd?.(() => {
      ended = true;
    });
    // Cursor went on without the caller's result: the turn ends (the registry lets it go), and the result will
    // continue the conversation from the checkpoint it parked with, which stays as it was.
    for (let i = 0; i < 500 && !ended; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(true);
    expect(turn.status).toBe("ended");
    const resumed = collect(
      turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "file body", isError: false }]),
    );
    await expect(resumed).rejects.toThrow(ProxyError);
    expect((await fx.store.load(conversationId))?.checkpoint).toEqual(parkedAt?.checkpoint);
    expect(runCount(fx)).toBe(1);
  });

  it("rejects a native exec when no equivalent tool is declared", async () => {
    const text = '[[emu:native shell {"command":"rm -rf /"}]]';
    const events = await collect(fx.client.startTurn(userTurn(`${transport}-reject`, text)).stream());
    expect(toolCallsOf(events)).toHaveLength(0);
    expect(textOf(events)).toContain("rejected");
    expect(endOf(events)).toBe("stop");
  });

  it("keeps the upload per turn flat over ten turns and recalls from state", async () => {
    fx.emulator.resetStats();
    const conversationId = `${transport}-ten`;
    const history: HistoryMessage[] = [{ role: "system", content: "You are a test assistant." }];
    for (let i = 1; i <= 10; i++) {
      const text = i === 10 ? "[[emu:recall]]" : `message number ${i} ${"padding ".repeat(40)}`;
      history.push({ role: "user", content: text });
      const events = await collect(
        fx.client.startTurn({ model: "auto", conversationId, messages: [...history], tools: [] }).stream(),
      );
      expect(endOf(events)).toBe("stop");
      history.push({ role: "assistant", content: textOf(events), toolCalls: [] });
    }
    expect(history.at(-1)?.content).toBe(`First message: message number 1 ${"padding ".repeat(40)}`.trim());
    const turns = fx.emulator.stats().turns.filter((t) => t.conversationId === conversationId);
    expect(turns).toHaveLength(10);
    const bytes = turns.map((t) => t.requestBytes);
    expect(bytes[9]).toBeLessThanOrEqual(1.5 * (bytes[1] ?? 0));
  });

  it("rebuilds from history when the stored blobs are gone (Blob not found)", async () => {
    const conversationId = `${transport}-blobs`;
    const history: HistoryMessage[] = [{ role: "user", content: "the very first message" }];
    const first = await collect(
      fx.client.startTurn({ model: "auto", conversationId, messages: [...history], tools: [] }).stream(),
    );
    history.push(
      { role: "assistant", content: textOf(first), toolCalls: [] },
      { role: "user", content: "[[emu:recall]]" },
    );
    const record = await fx.store.load(conversationId);
    expect(record?.blobs.size).toBeGreaterThan(0);
    if (record !== undefined) await fx.store.save({ ...record, blobs: new Map() });
    const second = await collect(
      fx.client.startTurn({ model: "auto", conversationId, messages: [...history], tools: [] }).stream(),
    );
    expect(textOf(second)).toBe("First message: the very first message");
  });

  it("a model Cursor does not know or no longer serves fails a continued turn at once, with no rebuild", async () => {
    for (const name of ["BAD_MODEL_NAME", "MODEL_NO_LONGER_SUPPORTED"]) {
      const conversationId = `${transport}-model-gone-${name}`;
      const history: HistoryMessage[] = [{ role: "user", content: "a first message" }];
      const first = await collect(
        fx.client.startTurn({ model: "auto", conversationId, messages: [...history], tools: [] }).stream(),
      );
      history.push(
        { role: "assistant", content: textOf(first), toolCalls: [] },
        { role: "user", content: `[[emu:error ${name}]]` },
      );
      fx.emulator.resetStats();
      const failed = await collectUntilFailure(
        fx.client.startTurn({ model: "auto", conversationId, messages: [...history], tools: [] }).stream(),
      );
      expect(failed.failure).toMatchObject({ code: "not_found", detail: "model_not_found" });
      // Not a rejected state: rebuilding the conversation cannot bring the model back.
      expect(fx.emulator.stats().turns).toHaveLength(1);
    }
  });

  it("rebuilds once when Cursor reports a missing nested blob", async () => {
    // Without the emulator's blob cache every referenced blob is read from our store, so a dropped nested blob
    // surfaces as the server's `internal: Blob not found`.
    const strict = await startFixture({ transport, emulator: { cacheBlobs: false } });
    try {
      const conversationId = `${transport}-nested-blobs`;
      const history: HistoryMessage[] = [{ role: "user", content: "nested first message" }];
      const turn = (messages: HistoryMessage[]) =>
        collect(strict.client.startTurn({ model: "auto", conversationId, messages, tools: [] }).stream());
      const first = await turn([...history]);
      history.push(
        { role: "assistant", content: textOf(first), toolCalls: [] },
        { role: "user", content: "[[emu:recall]]" },
      );
      const record = await strict.store.load(conversationId);
      if (record === undefined) throw new Error("no stored record");
      const state = fromBinary(ConversationStateStructureSchema, record.checkpoint);
      const topLevel = new Set([...state.rootPromptMessagesJson, ...state.turns].map(toHex));
      const kept = new Map([...record.blobs].filter(([id]) => topLevel.has(id)));
      expect(kept.size).toBeLessThan(record.blobs.size);
      await strict.store.save({ ...record, blobs: kept });
      strict.emulator.resetStats();
      const second = await turn([...history]);
      expect(textOf(second)).toBe("First message: nested first message");
      const outcomes = strict.emulator.stats().turns.map((t) => t.outcome);
      expect(outcomes).toEqual(["error:Internal", "completed"]);
    } finally {
      await strict.close();
    }
  });

  it("times out when Cursor stalls with heartbeats only", async () => {
    const stall = await startFixture({ transport, client: { stallTimeoutMs: 300 } });
    try {
      const turn = stall.client.startTurn(userTurn(`${transport}-stall`, "[[emu:stall 2]] some words here"));
      const error = await collect(turn.stream()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProxyError);
      expect((error as ProxyError).code).toBe("timeout");
      expect(turn.status).toBe("ended");
    } finally {
      await stall.close();
    }
  });

  it("cancels mid-stream on abort", async () => {
    const slow = await startFixture({ transport, emulator: { tokensPerSecond: 200 } });
    try {
      const turn = slow.client.startTurn(userTurn(`${transport}-cancel`, "[[emu:tokens 400]]"));
      const controller = new AbortController();
      const seen: string[] = [];
      const error = await (async () => {
        for await (const event of turn.stream(controller.signal)) {
          if (event.type === "text-delta") seen.push(event.text);
          if (seen.length === 3) controller.abort();
        }
      })().catch((e: unknown) => e);
      expect((error as ProxyError).code).toBe("canceled");
      expect(seen.length).toBeLessThan(400);
      expect(turn.status).toBe("ended");
      await waitFor(() => slow.emulator.stats().turns[0]?.outcome === "cancelled");
    } finally {
      await slow.close();
    }
  });

  // HTTP/1.1 pays one BidiAppend request per client message; under a loaded CI machine 200 turns can take ~20 s.
  it("runs 100 concurrent conversations without cross-talk", async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `${transport}-many-${i}`);
    const firsts = await Promise.all(
      ids.map((id) => collect(fx.client.startTurn(userTurn(id, `hello from ${id}`)).stream())),
    );
    expect(firsts.map(textOf)).toEqual(ids.map((id) => `You said: hello from ${id}`));
    const recalls = await Promise.all(
      ids.map((id, i) =>
        collect(
          fx.client
            .startTurn({
              model: "auto",
              conversationId: id,
              tools: [],
              messages: [
                { role: "system", content: "You are a test assistant." },
                { role: "user", content: `hello from ${id}` },
                { role: "assistant", content: textOf(firsts[i] ?? []), toolCalls: [] },
                { role: "user", content: "[[emu:recall]]" },
              ],
            })
            .stream(),
        ),
      ),
    );
    expect(recalls.map(textOf)).toEqual(ids.map((id) => `First message: hello from ${id}`));
  }, 90_000);

  it("a parked turn closed as expired (the registry's TTL) answers a late resume with turn_expired", async () => {
    const turn = fx.client.startTurn(
      userTurn(`${transport}-ttl`, '[[emu:tool lookup {"q":"x"}]]', { tools: [lookupTool] }),
    );
    const calls = toolCallsOf(await collect(turn.stream()));
    expect(turn.status).toBe("parked");
    await turn.close(EXPIRED_REASON);
    expect(turn.status).toBe("ended");
    const error = await collect(
      turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "late", isError: false }]),
    ).catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("not_found");
    expect((error as ProxyError).detail).toBe("turn_expired");
  });

  it("refreshes the token once after unauthenticated and retries", async () => {
    const bad = await startFixture({ transport, initialToken: "not-a-valid-token" });
    try {
      const events = await collect(bad.client.startTurn(userTurn(`${transport}-auth`, "authenticated?")).stream());
      expect(textOf(events)).toBe("You said: authenticated?");
      expect(bad.tokens.refreshes).toBe(1);
    } finally {
      await bad.close();
    }
  });

  it("retries a connection lost before any output, boundedly", async () => {
    fx.emulator.resetStats();
    const error = await collect(fx.client.startTurn(userTurn(`${transport}-drop0`, "[[emu:drop 0]]")).stream()).catch(
      (e: unknown) => e,
    );
    expect((error as ProxyError).code).toBe("backend_unavailable");
    // One attempt plus the harness's two retries.
    expect(runCount(fx)).toBe(3);
  });

  it("never replays a turn whose connection dropped after output", async () => {
    fx.emulator.resetStats();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of fx.client
        .startTurn(userTurn(`${transport}-drop3`, "[[emu:drop 3]] a b c d e f"))
        .stream()) {
        if (event.type === "text-delta") seen.push(event.text);
      }
    })().catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("backend_unavailable");
    expect(seen.length).toBeGreaterThan(0);
    expect(runCount(fx)).toBe(1);
  });

  it("lists models with an auto entry", async () => {
    const models = await fx.client.listModels();
    expect(models.length).toBeGreaterThan(0);
    expect(models.some((m) => m.id === "auto" || m.aliases.includes("auto"))).toBe(true);
    expect(await fx.client.listModels()).toBe(models);
  });

  it("maps a usage limit to quota_exceeded without retrying", async () => {
    fx.emulator.resetStats();
    const error = await collect(
      fx.client.startTurn(userTurn(`${transport}-quota`, "[[emu:error usage_limit]]")).stream(),
    ).catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("quota_exceeded");
    expect(runCount(fx)).toBe(1);
  });
});
