import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ConversationStateStructureSchema,
  ConversationStepSchema,
  ConversationTurnStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { reachableBlobIds } from "./blob-graph.js";
import { blobIdOf, toHex } from "./blob-store.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("reachableBlobIds", () => {
  it("follows blob ids through turns, user messages and steps, and treats JSON blobs as leaves", () => {
    const prompt = bytes('{"role":"user","content":"hello"}');
    const user = bytes("serialized user message");
    const step = toBinary(
      ConversationStepSchema,
      create(ConversationStepSchema, { message: { case: "assistantMessage", value: { text: "hi" } } }),
    );
    const turn = toBinary(
      ConversationTurnStructureSchema,
      create(ConversationTurnStructureSchema, {
        turn: { case: "agentConversationTurn", value: { userMessage: blobIdOf(user), steps: [blobIdOf(step)] } },
      }),
    );
    const summary = bytes("summary blob");
    const orphan = bytes("orphan");
    const root = toBinary(
      ConversationStateStructureSchema,
      create(ConversationStateStructureSchema, {
        rootPromptMessagesJson: [blobIdOf(prompt)],
        turns: [blobIdOf(turn)],
        summary: blobIdOf(summary),
        fileStates: { "a.ts": blobIdOf(summary) },
      }),
    );
    const blobs = new Map([prompt, user, step, turn, summary, orphan].map((d) => [toHex(blobIdOf(d)), d] as const));
    const reached = reachableBlobIds(root, blobs);
    expect([...reached].sort()).toEqual([prompt, user, step, turn, summary].map((d) => toHex(blobIdOf(d))).sort());
  });

  it("terminates on blobs that reference each other", () => {
    // Server-chosen ids (§9 item 6: not necessarily SHA-256 of the data) can form a cycle.
    const idA = new Uint8Array(32).fill(1);
    const idB = new Uint8Array(32).fill(2);
    const a = new Uint8Array([0x0a, 32, ...idB]);
    const b = new Uint8Array([0x0a, 32, ...idA]);
    const blobs = new Map([
      [toHex(idA), a],
      [toHex(idB), b],
    ]);
    const root = new Uint8Array([0x0a, 32, ...idA]);
    expect(reachableBlobIds(root, blobs)).toEqual(new Set([toHex(idA), toHex(idB)]));
  });
});
