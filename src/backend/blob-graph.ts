/**
 * Which blobs a checkpoint still needs. Every `bytes` field of the *Structure messages is a 32-byte blob id
 * (cursor-protocol.md §4.11), and blobs set by the server may themselves be serialized structures that reference
 * more blobs. Rather than hard-coding today's schema (which the server extends without notice), the walk is
 * schema-free: it parses bytes as protobuf wire format, treats every 32-byte length-delimited value that names a
 * stored blob as a reference, and descends into nested messages and referenced blobs. JSON blobs simply fail to
 * parse as messages and are leaves.
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

const BLOB_ID_LENGTH = 32;
const MAX_DEPTH = 24;

function lengthDelimitedValues(bytes: Uint8Array): Uint8Array[] | undefined {
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

/**
 * Hex ids of every stored blob reachable from `root` (a serialized checkpoint). `blobs` maps hex id → bytes.
 */
export function reachableBlobIds(root: Uint8Array, blobs: ReadonlyMap<string, Uint8Array>): Set<string> {
  const reached = new Set<string>();
  const walk = (bytes: Uint8Array, depth: number): void => {
    if (depth > MAX_DEPTH) return;
    const values = lengthDelimitedValues(bytes);
    if (values === undefined) return;
    for (const value of values) {
      if (value.length === BLOB_ID_LENGTH) {
        const hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex");
        const blob = blobs.get(hex);
        if (blob !== undefined) {
          if (!reached.has(hex)) {
            reached.add(hex);
            walk(blob, depth + 1);
          }
          continue;
        }
      }
      if (value.length > 1) walk(value, depth + 1);
    }
  };
  walk(root, 0);
  return reached;
}
