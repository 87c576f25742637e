/**
 * Conversation memory without history replay (docs/protocol.md §4.11, §5.3, §5.4): the emulator answers questions
 * about earlier turns only from the state and blobs it receives, and a correct client's upload stays flat per turn.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { type Emulator, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
  ConversationTurnStructureSchema,
} from "../../src/gen/agent/v1/conversation_state_pb.js";
import { ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";
import { agentClient, BlobStore, driveRun, runRequest, toolDefinition } from "./support/raw-client.js";

const opened: Emulator[] = [];
async function emulatorWith(options: EmulatorOptions = {}) {
  const emulator = await startEmulator({ heartbeatIntervalMs: 20, ...options });
  opened.push(emulator);
  return { emulator, client: agentClient(emulator.url, emulator.issueTokens().accessToken) };
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((e) => e.close()));
});

describe("recall across Runs", () => {
  it("answers from the checkpoint it received, with the blob cache warm (no blob fetched again)", async () => {
    const { emulator, client } = await emulatorWith();
    const store = new BlobStore();
    const first = await driveRun(client, runRequest("My name is Ada", { conversationId: "c1" }), store);
    const second = await driveRun(
      client,
      runRequest("[[emu:recall]]", { conversationId: "c1", state: first.checkpoint }),
      store,
    );
    expect(second.error).toBeUndefined();
    expect(second.text).toBe("First message: My name is Ada");
    expect(second.checkpoint?.turns).toHaveLength(2);
    expect(emulator.stats().turns[1]?.getBlobRequests).toBe(0);
  });

  it("a fresh emulator instance still answers, by fetching the client's blobs", async () => {
    const { client: firstClient } = await emulatorWith();
    const store = new BlobStore();
    const first = await driveRun(firstClient, runRequest("remember the word banana"), store);
    const { emulator, client } = await emulatorWith();
    const second = await driveRun(client, runRequest("[[emu:recall]]", { state: first.checkpoint }), store);
    expect(second.text).toBe("First message: remember the word banana");
    expect(emulator.stats().turns[0]?.getBlobRequests).toBeGreaterThan(0);
  });

  it("a client that lost its blobs gets `internal: Blob not found` with machine-readable details", async () => {
    const { client: firstClient } = await emulatorWith();
    const first = await driveRun(firstClient, runRequest("something"), new BlobStore());
    const { client } = await emulatorWith();
    const second = await driveRun(client, runRequest("[[emu:recall]]", { state: first.checkpoint }), new BlobStore());
    expect(second.error?.code).toBe(Code.Internal);
    expect(second.error?.rawMessage).toMatch(/^Blob not found/);
    expect(second.error?.findDetails(ErrorDetailsSchema)).toHaveLength(1);
  });

  it("inline bytes where a blob id is expected → `internal: Blob not found`", async () => {
    const { client } = await emulatorWith();
    const inlineTurn = toBinary(
      ConversationTurnStructureSchema,
      create(ConversationTurnStructureSchema, { turn: { case: "agentConversationTurn", value: { steps: [] } } }),
    );
    const state = create(ConversationStateStructureSchema, { turns: [new Uint8Array([...inlineTurn, 1, 2, 3])] });
    const result = await driveRun(client, runRequest("hi", { state }), new BlobStore());
    expect(result.error?.code).toBe(Code.Internal);
    expect(result.error?.rawMessage).toMatch(/^Blob not found/);
  });

  it("reads a client-rebuilt history from root prompt blobs", async () => {
    const { client } = await emulatorWith();
    const store = new BlobStore();
    const state = create(ConversationStateStructureSchema, {
      rootPromptMessagesJson: [
        store.putJson({ role: "system", content: "You are terse." }),
        store.putJson({ role: "user", content: [{ type: "text", text: "What is 2+2?" }] }),
        store.putJson({ role: "assistant", content: [{ type: "text", text: "4" }] }),
      ],
    });
    const result = await driveRun(client, runRequest("[[emu:recall]]", { state }), store);
    expect(result.text).toBe("First message: What is 2+2?");
  });

  it("a resume_action after tool results answers from the results in the state, without calling again", async () => {
    const { client } = await emulatorWith();
    const store = new BlobStore();
    const state = create(ConversationStateStructureSchema, {
      rootPromptMessagesJson: [
        store.putJson({ role: "user", content: "[[emu:tool weather {}]]" }),
        store.putJson({
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "call_1", toolName: "weather", args: {} }],
        }),
        store.putJson({
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_1",
              toolName: "weather",
              output: { type: "text", value: "sunny" },
            },
          ],
        }),
      ],
    });
    const result = await driveRun(client, runRequest("", { state, resume: true }), store, {
      tools: [toolDefinition("weather")],
    });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe("weather returned: sunny");
    expect(result.messages.filter((m) => m.message.case === "execServerMessage")).toHaveLength(1);
  });

  it.each([
    [
      "a tool message of plain text parts",
      { role: "tool", toolName: "weather", content: [{ type: "text", text: "sunny" }] },
      "weather returned: sunny",
    ],
    [
      "assistant text after the call",
      { role: "assistant", content: [{ type: "text", text: "weather: sunny" }] },
      "Tool results arrived as text: weather: sunny",
    ],
  ])(
    "EPH-style recovery: a resume whose result arrives as %s does not call the tool again",
    async (_, result, reply) => {
      const { client } = await emulatorWith();
      const store = new BlobStore();
      const state = create(ConversationStateStructureSchema, {
        rootPromptMessagesJson: [
          store.putJson({ role: "user", content: "[[emu:tool weather {}]]" }),
          store.putJson({
            role: "assistant",
            content: [{ type: "tool-call", toolCallId: "call_1", toolName: "weather", args: {} }],
          }),
          store.putJson(result),
        ],
      });
      const run = await driveRun(client, runRequest("", { state, resume: true }), store, {
        tools: [toolDefinition("weather")],
      });
      expect(run.error).toBeUndefined();
      expect(run.text).toBe(reply);
      const execs = run.messages.flatMap((m) =>
        m.message.case === "execServerMessage" ? [m.message.value.message.case] : [],
      );
      expect(execs).toEqual(["requestContextArgs"]);
    },
  );

  it("a malformed root prompt blob is an invalid_argument error", async () => {
    const { client } = await emulatorWith();
    const store = new BlobStore();
    const state = create(ConversationStateStructureSchema, {
      rootPromptMessagesJson: [store.put(new Uint8Array([0xff, 0x00]))],
    });
    const result = await driveRun(client, runRequest("hi", { state }), store);
    expect(result.error?.code).toBe(Code.InvalidArgument);
  });
});

describe("flat upload", () => {
  async function converse(options: EmulatorOptions) {
    const { emulator, client } = await emulatorWith(options);
    const store = new BlobStore();
    let state: ConversationStateStructure | undefined;
    for (let i = 0; i < 5; i++) {
      const text = `turn ${i}: ${"x".repeat(2000)}`;
      const result = await driveRun(
        client,
        runRequest(text, { conversationId: "flat", ...(state ? { state } : {}) }),
        store,
      );
      expect(result.turnEnded).toBe(true);
      state = result.checkpoint;
    }
    return emulator.stats().turns;
  }

  it("per-turn upload stays flat for a client that continues from checkpoints (cache warm)", async () => {
    const turns = await converse({});
    const bytes = turns.map((t) => t.requestBytes);
    // Each turn carries one 2 KB message; the history (8 KB by turn 5) is never uploaded again.
    expect(Math.max(...bytes) - Math.min(...bytes)).toBeLessThan(400);
    expect(turns.every((t) => t.getBlobRequests === 0)).toBe(true);
  });

  it("without the cache, every referenced blob is fetched each turn", async () => {
    const turns = await converse({ cacheBlobs: false });
    expect(turns.map((t) => t.getBlobRequests)).toEqual([0, 3, 6, 9, 12]);
  });
});
