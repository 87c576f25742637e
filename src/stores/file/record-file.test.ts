import { describe, expect, it } from "vitest";
import type { ConversationRecord } from "../types.js";
import { decodeRecord } from "./record-decode.js";
import { encodeRecord } from "./record-file.js";

const record: ConversationRecord = {
  conversationId: "conv-1",
  checkpoint: new Uint8Array([1, 2, 3]),
  coveredMessages: 4,
  fingerprint: "f".repeat(64),
  updatedAt: 1_234,
  blobs: new Map([
    ["aa", new Uint8Array([9, 8, 7, 6])],
    ["bb", new Uint8Array(0)],
  ]),
};

const fileOf = (r: ConversationRecord) => Buffer.concat(encodeRecord(r));

describe("record file", () => {
  it("round-trips a record and stores blob bytes as they are, not as base64", () => {
    const big = new Uint8Array(300_000).fill(0x41);
    const file = fileOf({ ...record, blobs: new Map([["cc", big]]) });
    expect(file.byteLength).toBeLessThan(big.byteLength + 400);
    expect(file.includes(Buffer.from(big))).toBe(true);
    const back = decodeRecord(fileOf(record));
    expect(back).toEqual({ ...record, blobs: new Map(record.blobs) });
  });

  it("hands the blob bytes over without copying them into a new document", () => {
    const chunks = encodeRecord(record);
    expect(chunks).toContain(record.checkpoint);
    for (const blob of record.blobs.values()) expect(chunks).toContain(blob);
  });

  it("still reads format 1 (base64 in JSON)", () => {
    const legacy = JSON.stringify({
      version: 1,
      conversationId: "old",
      checkpoint: Buffer.from([5, 6]).toString("base64"),
      coveredMessages: 2,
      fingerprint: "x",
      updatedAt: 7,
      blobs: { abcd: Buffer.from([1]).toString("base64") },
    });
    const back = decodeRecord(Buffer.from(legacy));
    expect(back.conversationId).toBe("old");
    expect([...back.checkpoint]).toEqual([5, 6]);
    expect([...(back.blobs.get("abcd") ?? [])]).toEqual([1]);
  });

  it("rejects truncated, padded and malformed files", () => {
    const file = fileOf(record);
    expect(() => decodeRecord(file.subarray(0, file.byteLength - 1))).toThrow();
    expect(() => decodeRecord(Buffer.concat([file, Buffer.from([0])]))).toThrow();
    expect(() => decodeRecord(file.subarray(0, 10))).toThrow();
    expect(() => decodeRecord(Buffer.from("{not json"))).toThrow();
    const badHeader = Buffer.from(file);
    badHeader.write("#", 12, "latin1");
    expect(() => decodeRecord(badHeader)).toThrow();
  });
});
