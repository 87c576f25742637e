/**
 * A conversation record for store tests: a checkpoint referencing a root prompt blob and a turn blob that itself
 * references a user-message blob, plus one orphan blob nothing references (a store's collector must drop it).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import {
  ConversationStateStructureSchema,
  ConversationTurnStructureSchema,
} from "../../src/gen/agent/v1/conversation_state_pb.js";
import { blobIdOf, toHex } from "../../src/stores/blob-id.js";
import type { ConversationRecord } from "../../src/stores/types.js";

const encoder = new TextEncoder();

/** The orphan blob's bytes in every {@link sampleRecord}. */
export const ORPHAN_BLOB = encoder.encode("nobody references me");

/** A record for `conversationId` saved at `now`; `extra` varies its user message (and so its turn blob). */
export function sampleRecord(conversationId: string, now: number, extra = "x"): ConversationRecord {
  const prompt = encoder.encode('{"role":"system","content":"hi"}');
  const userMessage = encoder.encode(`user message ${extra}`);
  const turn = toBinary(
    ConversationTurnStructureSchema,
    create(ConversationTurnStructureSchema, {
      turn: { case: "agentConversationTurn", value: { userMessage: blobIdOf(userMessage), steps: [] } },
    }),
  );
  const checkpoint = toBinary(
    ConversationStateStructureSchema,
    create(ConversationStateStructureSchema, { rootPromptMessagesJson: [blobIdOf(prompt)], turns: [blobIdOf(turn)] }),
  );
  const blobs = new Map([prompt, userMessage, turn, ORPHAN_BLOB].map((data) => [toHex(blobIdOf(data)), data] as const));
  return { conversationId, checkpoint, coveredMessages: 2, fingerprint: "f", blobs, updatedAt: now };
}
