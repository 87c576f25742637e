import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HAS_VECTORS, reportSharedSkip, VECTORS_DIR } from "../../test/support/shared.js";
import { buildChecksum, obfuscate, timestampBytes } from "./checksum.js";

reportSharedSkip("x-cursor-checksum worked example");

describe.skipIf(!HAS_VECTORS)("x-cursor-checksum (vectors/checksum-worked-example.computed.json)", () => {
  const example = () =>
    JSON.parse(readFileSync(join(VECTORS_DIR, "checksum-worked-example.computed.json"), "utf8")) as Record<
      string,
      unknown
    > & { inputs: { now_ms: number; token: string } };
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

  it("reproduces the JS shift-quirk layout", () => {
    const v = example();
    const variant = v["variant_A_js_shift_quirk (IDE/JS clients, zhengwenj TimestampHeader, JiuZ)"] as Record<
      string,
      string
    >;
    const raw = timestampBytes(v.inputs.now_ms, "js-quirk");
    expect(hex(raw)).toBe(variant.raw_6_bytes_hex);
    expect(hex(obfuscate(raw))).toBe(variant.obfuscated_hex);
    expect(Buffer.from(obfuscate(raw)).toString("base64")).toBe(variant.base64);
    expect(buildChecksum({ nowMs: v.inputs.now_ms, token: v.inputs.token })).toBe(v.full_137_char_header_variant_A);
  });

  it("reproduces the true 48-bit big-endian layout", () => {
    const v = example();
    const variant = v["variant_B_true_48bit_big_endian (wisdgod, raphapr/OpenCursor with 30-min bucket)"] as Record<
      string,
      string
    >;
    const raw = timestampBytes(v.inputs.now_ms, "big-endian-48");
    expect(hex(raw)).toBe(variant.raw_6_bytes_hex);
    expect(hex(obfuscate(raw))).toBe(variant.obfuscated_hex);
    const header = buildChecksum({ nowMs: v.inputs.now_ms, token: v.inputs.token, layout: "big-endian-48" });
    expect(header.slice(0, 8)).toBe(variant.base64);
    expect(header).toHaveLength(137);
  });
});
