import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { ProtoReader } from "./proto-reader.js";

const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(" ", ""), "hex"));
const reader = (text: string, varintBytes = 7) => new ProtoReader(hex(text), 0, varintBytes);

describe("ProtoReader", () => {
  it("reads varints of one to seven bytes as the library writes and reads them", () => {
    for (const value of [
      0,
      1,
      127,
      128,
      300,
      16_383,
      16_384,
      2 ** 28 - 1,
      2 ** 28,
      2 ** 32 - 1,
      2 ** 35,
      2 ** 49 - 1,
    ]) {
      const bytes = new BinaryWriter().uint64(value).finish();
      const r = new ProtoReader(bytes, 0, 7);
      expect(r.varint(bytes.length)).toBe(value);
      expect(r.at).toBe(bytes.length);
      expect(r.minimal).toBe(true);
      expect(Number(new BinaryReader(bytes).uint64())).toBe(value);
    }
  });

  it("leaves a varint longer than its limit, truncated or running past `end` as -1", () => {
    expect(reader("ff ff ff ff ff ff ff 01").varint(8)).toBe(-1); // 2^49 needs eight bytes
    expect(reader("80 80 80 80 80 80 80 00").varint(8)).toBe(-1); // 0, over-long
    expect(reader("80 80 80 80 01", 4).varint(5)).toBe(-1); // 2^28 needs five: streaming-decode's limit is four
    expect(reader("80 80 80 80 00", 4).varint(5)).toBe(-1); // a small value in five bytes, over that limit too
    expect(reader("ff ff ff 7f", 4).varint(4)).toBe(2 ** 28 - 1);
    expect(reader("80 80").varint(2)).toBe(-1); // truncated at the end of the bytes
    expect(reader("ac 02").varint(1)).toBe(-1); // 300, but `end` is after its first byte
    expect(reader("").varint(0)).toBe(-1);
    const r = reader("ac 02 05");
    r.at = 3;
    expect(r.varint(3)).toBe(-1); // nothing left before `end`
  });

  it("reads a non-minimal varint and says so; a lone zero is minimal", () => {
    const r = reader("84 00 00");
    expect(r.varint(3)).toBe(4);
    expect(r.minimal).toBe(false);
    const zero = reader("00");
    expect(zero.varint(1)).toBe(0);
    expect(zero.minimal).toBe(true);
    const padded = reader("80 80 80 80 80 80 00", 7);
    expect(padded.varint(7)).toBe(0);
    expect(padded.minimal).toBe(false);
    // The flag stays false until the caller resets it (turn-decode.ts, per checkpoint).
    expect(r.varint(3)).toBe(0);
    expect(r.minimal).toBe(false);
  });

  it("reads a uint32 only when fromBinary reads the same value", () => {
    expect(reader("ff ff ff ff 0f").uint32(5)).toBe(2 ** 32 - 1);
    expect(reader("80 80 80 80 10").uint32(5)).toBe(-1); // 2^32: fromBinary's uint32 would wrap it to 0
    expect(reader("80 80 80").uint32(3)).toBe(-1);
  });

  it("bounds a length-delimited field by `end`", () => {
    expect(reader("03 61 62 63").lengthEnd(4)).toBe(4);
    expect(reader("03 61 62 63 64").lengthEnd(3)).toBe(-1); // within the bytes, past `end`
    expect(reader("04 61 62 63").lengthEnd(4)).toBe(-1); // past the bytes
    expect(reader("ff ff ff ff 0f 61").lengthEnd(6)).toBe(-1);
    expect(reader("80").lengthEnd(1)).toBe(-1);
    const view = reader("02 61 62 63");
    const value = view.field(4);
    expect(value).toStrictEqual(hex("61 62"));
    expect(value?.buffer).toBe(view.bytes.buffer); // a view, not a copy
    expect(view.at).toBe(3);
    expect(reader("05 61 62").field(3)).toBeUndefined();
  });

  it("reads strict UTF-8 strings, leaving invalid or cut ones as undefined, moved past their length only", () => {
    expect(reader("00").string(1)).toBe("");
    const ok = reader("07 68 c3 a9 f0 9f 99 82");
    expect(ok.string(8)).toBe("hé🙂");
    expect(ok.at).toBe(8);
    for (const bad of ["01 ff", "02 c3 28", "03 ed a0 80", "01 c3"]) {
      const invalid = reader(bad);
      expect(invalid.string(invalid.bytes.length)).toBeUndefined();
      expect(invalid.at).toBe(1);
    }
    const cut = reader("06 68 c3 a9");
    expect(cut.string(4)).toBeUndefined(); // six bytes announced, three there
    expect(cut.at).toBe(1);
  });

  it("moves past a tag only when it is the next byte before `end`", () => {
    const r = reader("08 01");
    expect(r.next(0x10, 2)).toBe(false);
    expect(r.at).toBe(0);
    expect(r.next(0x08, 0)).toBe(false);
    expect(r.next(0x08, 2)).toBe(true);
    expect(r.at).toBe(1);
    expect(r.byte()).toBe(1);
    expect(r.byte()).toBeUndefined();
  });
});
