import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import {
  ConversationStateStructureSchema,
  ConversationStepSchema,
  ConversationTurnStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { lengthDelimitedValues, reachableBlobIds } from "./blob-graph.js";
import { blobIdOf, toHex } from "./blob-id.js";

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

/** The reference: the same scan with protobuf-es's BinaryReader, where malformed input throws. */
function referenceValues(bytes: Uint8Array): Uint8Array[] | undefined {
  const reader = new BinaryReader(bytes);
  const values: Uint8Array[] = [];
  try {
    while (reader.pos < reader.len) {
      const [fieldNo, wireType] = reader.tag();
      if (fieldNo <= 0) return undefined;
      if (wireType === WireType.LengthDelimited) values.push(reader.bytes());
      else if (wireType === WireType.StartGroup || wireType === WireType.EndGroup) return undefined;
      else reader.skip(wireType, fieldNo);
    }
  } catch {
    return undefined;
  }
  return values;
}

describe("lengthDelimitedValues", () => {
  it("accepts and rejects exactly what BinaryReader does", () => {
    // Deterministic pseudo-random input biased towards wire-format-looking bytes (small tags, varint runs).
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const palette = [0x08, 0x0a, 0x0d, 0x09, 0x0b, 0x0c, 0x12, 0x80, 0xff, 0x0f, 0x10, 0x00, 0x01, 0x20, 0x7f];
    const inputs: Uint8Array[] = [
      new Uint8Array([0x0a, 0x80, 0x80, 0x80, 0x80, 0x10]),
      new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
      new Uint8Array([0x88, 0x80, 0x80, 0x80, 0x10, 0x00]),
      new Uint8Array([0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4]),
      new TextEncoder().encode('{"role":"user","content":"hello"}'),
    ];
    for (let i = 0; i < 20_000; i++) {
      const length = Math.floor(random() * 24);
      inputs.push(
        Uint8Array.from({ length }, () =>
          random() < 0.7 ? (palette[Math.floor(random() * palette.length)] ?? 0) : Math.floor(random() * 256),
        ),
      );
    }
    let valid = 0;
    for (const input of inputs) {
      const expected = referenceValues(input);
      expect(lengthDelimitedValues(input), Buffer.from(input).toString("hex")).toEqual(expected);
      if (expected !== undefined) valid++;
    }
    // The corpus must exercise both outcomes.
    expect(valid).toBeGreaterThan(1000);
    expect(valid).toBeLessThan(inputs.length - 1000);
  });
});
