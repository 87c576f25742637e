/**
 * `x-cursor-checksum` builder (docs/protocol.md §2.4). Only the legacy IDE API wants it; the agent API clients
 * send none. Kept because it is cheap and pinned by vectors/checksum-worked-example.computed.json.
 */
import { createHash } from "node:crypto";

/** Byte layout of the 6 timestamp bytes: the JS client's shift quirk, or a true 48-bit big-endian number. */
export type ChecksumLayout = "js-quirk" | "big-endian-48";

/** Inputs of {@link buildChecksum}. */
export interface ChecksumInput {
  nowMs: number;
  token: string;
  /** @default "js-quirk" — what the real JS client produces */
  layout?: ChecksumLayout;
}

/** The 6 raw timestamp bytes for `t = floor(nowMs / 1e6)`. */
export function timestampBytes(nowMs: number, layout: ChecksumLayout): Uint8Array {
  const t = Math.floor(nowMs / 1_000_000);
  const b = [0, 8, 16, 24].map((shift) => Math.floor(t / 2 ** shift) & 0xff);
  const [b0 = 0, b1 = 0, b2 = 0, b3 = 0] = b;
  // JS takes shift counts mod 32, so t>>40 == t>>8 and t>>32 == t: bytes come out as [b1, b0, b3, b2, b1, b0].
  return Uint8Array.from(layout === "js-quirk" ? [b1, b0, b3, b2, b1, b0] : [0, 0, b3, b2, b1, b0]);
}

/** XOR-chain obfuscation: byte[i] = ((byte[i] ^ prev) + i) mod 256, prev = new byte, starting at 0xA5. */
export function obfuscate(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let prev = 0xa5;
  bytes.forEach((value, i) => {
    const next = ((value ^ prev) + i) & 0xff;
    out[i] = next;
    prev = next;
  });
  return out;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Full 137-character header: 8-char base64 timestamp, machineId, "/", macMachineId (JIUZ-style derivation). */
export function buildChecksum(input: ChecksumInput): string {
  const stamp = Buffer.from(obfuscate(timestampBytes(input.nowMs, input.layout ?? "js-quirk"))).toString("base64");
  return `${stamp}${sha256Hex(`${input.token}machineId`)}/${sha256Hex(`${input.token}macMachineId`)}`;
}
