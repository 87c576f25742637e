/**
 * JSON ⇄ serialized `google.protobuf.Value`. Cursor carries JSON in this form in two places (docs/protocol.md §4.7,
 * §5.2): `McpToolDefinition.input_schema` (the tool's JSON Schema) and every value of `McpArgs.args`.
 */
import { fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { ProxyError } from "../util/errors.js";
import type { JsonValue } from "./types.js";

/** Serializes a JSON value as `google.protobuf.Value` bytes. */
export function encodeJsonValue(value: JsonValue): Uint8Array {
  return toBinary(ValueSchema, fromJson(ValueSchema, value));
}

/**
 * Decodes `google.protobuf.Value` bytes into JSON. Empty bytes (a Value with no kind set, which is what an absent or
 * default value looks like on the wire) decode to `null`.
 */
export function decodeJsonValue(bytes: Uint8Array): JsonValue {
  const value = fromBinary(ValueSchema, bytes);
  if (value.kind.case === undefined) return null;
  return toJson(ValueSchema, value) as JsonValue;
}

/**
 * Turns `McpArgs.args` (argument name → Value bytes) into the JSON text of an arguments object, as an OpenAI tool
 * call carries it. A malformed value is a protocol error, never silently dropped.
 */
export function decodeArgumentsMap(args: Readonly<Record<string, Uint8Array>>): string {
  const out: { [key: string]: JsonValue } = {};
  for (const [name, bytes] of Object.entries(args)) {
    try {
      out[name] = decodeJsonValue(bytes);
    } catch (error) {
      throw new ProxyError("backend_protocol", `Tool argument "${name}" is not a valid google.protobuf.Value.`, {
        cause: error,
      });
    }
  }
  return JSON.stringify(out);
}

/** The inverse of {@link decodeArgumentsMap}: a JSON object becomes a map of Value bytes. */
export function encodeArgumentsMap(args: { [key: string]: JsonValue }): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const [name, value] of Object.entries(args)) out[name] = encodeJsonValue(value);
  return out;
}
