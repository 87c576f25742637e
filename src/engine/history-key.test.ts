/**
 * The one history key answers "which conversation does this request extend" (the engine's index) and "does the
 * stored checkpoint still cover this prefix" (planTurn). These tests drive both questions from the same requests,
 * through the engine's own translation, and require the same answer every time.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  continuationPrefixes,
  historyFingerprint,
  historyKey,
  historyKeyPrefixes,
} from "../backend/history-fingerprint.js";
import { planTurn } from "../backend/run-request.js";
import type { AgentClient, AgentTurn, TurnRequest } from "../backend/types.js";
import { createEngine } from "./engine.js";
import { toBackendInput } from "./history.js";
import type { ConversationMessage, EngineRequest } from "./types.js";

/** An empty `ConversationStateStructure` (zero bytes on the wire): the engine never looks inside a checkpoint. */
const CHECKPOINT = new Uint8Array(0);

function request(messages: ConversationMessage[], instructions: string[] = []): EngineRequest {
  return {
    model: "m",
    instructions,
    messages,
    tools: [],
    options: { reasoning: true, reasoningEffort: undefined, toolChoice: "auto" },
  };
}

const user = (text: string): ConversationMessage => ({ role: "user", parts: [{ type: "text", text }] });
const assistant = (text: string, calls: Array<[string, string, string]> = []): ConversationMessage => ({
  role: "assistant",
  text,
  reasoning: [],
  toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: args })),
});
const tool = (id: string, content: string): ConversationMessage => ({
  role: "tool",
  toolCallId: id,
  content,
  isError: false,
});

/** What the engine records after turn 1: the index entry and the checkpoint record (as the agent turn saves it). */
function afterFirstTurn(turn1: EngineRequest) {
  const input = toBackendInput(turn1).messages;
  const indexKey = historyKey(input);
  const record = {
    conversationId: "c",
    checkpoint: CHECKPOINT,
    coveredMessages: input.length,
    fingerprint: historyFingerprint(input),
    blobs: new Map<string, Uint8Array>(),
    updatedAt: 0,
  };
  return { indexKey, record };
}

/** Both answers for a follow-up request. */
function answers(state: ReturnType<typeof afterFirstTurn>, next: EngineRequest) {
  const messages = toBackendInput(next).messages;
  const prefixes = historyKeyPrefixes(messages);
  const found = continuationPrefixes(messages).some((length) => prefixes[length - 1] === state.indexKey);
  const covered = planTurn(messages, state.record).kind === "continue";
  return { found, covered };
}

const turn1 = request([{ role: "system", text: "Be brief." }, user("List files")], ["You are helpful."]);

type Case = [name: string, next: EngineRequest, expected: boolean];

const cases: Case[] = [
  [
    "the exact echo",
    request(
      [...turn1.messages, assistant("Two files.", [["c1", "ls", '{"path":".","all":true}']]), user("more")],
      turn1.instructions,
    ),
    true,
  ],
  [
    "whitespace, CRLF, key order and echoed think tags",
    request(
      [
        { role: "system", text: "Be brief." },
        user("List files \r\n"),
        assistant("<think>hm</think>\nTwo files.  ", [["c1", "ls", '{ "all": true, "path": "." }']]),
        user("more"),
      ],
      turn1.instructions,
    ),
    true,
  ],
  [
    "instructions rewritten and moved (Claude Code rewrites its system reminder every request)",
    request(
      [
        user("List files"),
        { role: "system", text: "<system-reminder>changed</system-reminder>" },
        assistant("Two files.", [["c1", "ls", '{"path":".","all":true}']]),
        user("more"),
      ],
      ["Different top-level instructions"],
    ),
    true,
  ],
  [
    "a tool_choice hint on one turn only",
    {
      ...request([...turn1.messages, assistant("Two files.", [["c1", "ls", "{}"]]), user("more")]),
      tools: [{ name: "ls", description: "", inputSchema: {} }],
      options: { reasoning: true, reasoningEffort: undefined, toolChoice: "required" },
    },
    true,
  ],
  [
    "an edited user message",
    request([user("List all files"), assistant("Two files.", [["c1", "ls", '{"path":".","all":true}']]), user("more")]),
    false,
  ],
  [
    "an edited reply (the checkpoint holds the model's own reply)",
    request([user("List files"), assistant("Three files.", [["c1", "ls", '{"path":".","all":true}']]), user("more")]),
    true,
  ],
  [
    "different tool arguments",
    request([user("List files"), assistant("Two files.", [["c1", "ls", '{"path":"/"}']]), user("more")]),
    true,
  ],
  ["a dropped reply", request([user("List files"), user("more")]), true],
  [
    "an inserted user message",
    request([user("List files"), user("wait"), assistant("Two files."), user("more")]),
    false,
  ],
  ["a reordered history", request([user("more"), user("List files"), assistant("Two files."), user("more")]), false],
  [
    "reasoning blocks echoed back differently (opaque payloads are not history)",
    request(
      [
        ...turn1.messages,
        {
          role: "assistant",
          text: "Two files.",
          reasoning: [{ text: "thinking…", opaque: "signature-abc" }],
          toolCalls: [{ id: "c1", name: "ls", arguments: '{"path":".","all":true}' }],
        },
        user("more"),
      ],
      turn1.instructions,
    ),
    true,
  ],
  [
    "tool results for the reply's call",
    request([
      user("List files"),
      assistant("Two files.", [["c1", "ls", '{"path":".","all":true}']]),
      tool("c1", "a"),
      user("more"),
    ]),
    true,
  ],
];

describe("one history key for the index and the checkpoint", () => {
  const state = afterFirstTurn(turn1);
  for (const [name, next, expected] of cases) {
    it(`agrees on ${name}`, () => {
      const { found, covered } = answers(state, next);
      expect(found).toBe(covered);
      expect(found).toBe(expected);
    });
  }

  it("agrees on randomly perturbed histories", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const noise = (text: string) => (random() < 0.3 ? ` ${text}\r\n` : random() < 0.3 ? `${text}!` : text);
    let agreed = 0;
    for (let round = 0; round < 300; round++) {
      const words = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, i) => `message ${round}-${i}`);
      const first = request(words.map(user), random() < 0.5 ? ["sys"] : []);
      const state = afterFirstTurn(first);
      const echoed: ConversationMessage[] = [
        ...words.map((w) => user(noise(w))),
        ...(random() < 0.2 ? [{ role: "system" as const, text: `reminder ${round}` }] : []),
        assistant(noise(`reply ${round}`)),
        user("next"),
      ];
      const { found, covered } = answers(state, request(echoed, random() < 0.5 ? ["other"] : []));
      expect(found).toBe(covered);
      if (found) agreed += 1;
    }
    // Both outcomes occur, so the comparison is not vacuous.
    expect(agreed).toBeGreaterThan(30);
    expect(agreed).toBeLessThan(300);
  });
});

describe("history keys computed once per request", () => {
  it("hashes a multi-megabyte message in parts to the same key as the concatenation", () => {
    const text = "lorem ipsum ".repeat(20_000);
    const [, key] = historyKeyPrefixes([
      { role: "system", content: "" },
      { role: "user", content: text },
    ]);
    const seed = createHash("sha256").update("cursor-bridge/history/v2").digest("hex");
    const json = JSON.stringify(["user", text.trim()]);
    expect(key).toBe(createHash("sha256").update(`${seed}\n${json}`).digest("hex"));
  });

  it("planTurn compares the stored fingerprint with the caller's key of the covered prefix", () => {
    const messages = toBackendInput(request([user("a"), assistant("b"), user("c")])).messages;
    const record = { ...afterFirstTurn(request([user("a")])).record, coveredMessages: 3, fingerprint: "given" };
    const keys = ["k0", "k1", "given", "k3"];
    expect(planTurn(messages, record, keys).kind).toBe("continue");
    expect(planTurn(messages, record).kind).toBe("rebuild");
  });

  it("the engine hands the agent client the keys it routed with, and says when it minted the conversation id", async () => {
    const seen: TurnRequest[] = [];
    const turn: AgentTurn = {
      conversationId: "c",
      status: "ended",
      pendingToolCallIds: [],
      async *stream() {
        yield { type: "turn-end", reason: "stop" } as const;
      },
      resume: () => {
        throw new Error("not parked");
      },
      close: async () => {},
    };
    const agentClient: AgentClient = {
      startTurn: (req) => {
        seen.push(req);
        return turn;
      },
      listModels: async () => [
        { id: "m", displayName: "m", aliases: [], reasoning: false, maxMode: false, vision: false },
      ],
    };
    const engine = createEngine({ agentClient });
    const req = request([user("a"), assistant("b"), user("c")], ["be brief"]);
    const started = await engine.startTurn(req, new AbortController().signal);
    for await (const _ of started.events) {
      // drain
    }
    const input = toBackendInput(req).messages;
    expect(seen[0]?.historyKeys).toEqual(historyKeyPrefixes(input));
    // The engine minted the id: the turn need not look for a stored record (no file read per request).
    expect(seen[0]?.newConversation).toBe(true);

    // A history the index knows continues its conversation: the stored record must be read.
    const known = createEngine({
      agentClient,
      index: { lookup: async () => "known", remember: async () => {}, size: () => 0, close: async () => {} },
    });
    const continued = await known.startTurn(req, new AbortController().signal);
    for await (const _ of continued.events) {
      // drain
    }
    expect(continued.route).toBe("continued");
    expect(seen[1]?.conversationId).toBe("known");
    expect(seen[1]?.newConversation).toBeUndefined();
  });
});
