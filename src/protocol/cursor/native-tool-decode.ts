/**
 * The server messages of a turn where Cursor calls one of its own tools (docs/protocol.md §4.6, §4.10, §5.1): the
 * `partial_tool_call` (its `ToolCall` case set, nothing in it), `tool_call_started` with the call's args, the
 * `exec_server_message` carrying the native exec args (`read_args`, `ls_args`, `grep_args`, `shell_args`,
 * `write_args`, `delete_args`, `fetch_args`…), and `tool_call_completed` with args and result. Like tool-decode.ts,
 * and with the same proto-reader.ts, this builds exactly the plain objects `fromBinary` would, without reflection; as
 * these are many messages, it reads them by hand-written layouts (native-tool-layouts.ts, native-tool-call-layouts.ts)
 * instead of with one function each. It reads only fields in number order (as `toBinary` and Cursor write them), a
 * repeated field's values and a map's entries together; any other byte (an unknown field or oneof case, a field out
 * of order or twice, a second case of a oneof, a map key twice, a varint over seven bytes or over its type's range,
 * invalid UTF-8, a length past the end) returns undefined and the caller decodes with `fromBinary`, so results and
 * errors stay the library's. A native tool call's partial, start and exec decoded about 40 KB of reflection objects.
 */
import type { AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import { SERVER_MESSAGE } from "./native-tool-call-layouts.js";
import { BOOL, BYTES, type FieldLayout, INT32, type MessageLayout, STRING, UINT32 } from "./native-tool-layouts.js";
import { ProtoReader } from "./proto-reader.js";

/** Varints read here have at most seven bytes (< 2^49: the uint64 timestamps); a longer one is left to `fromBinary`. */
const VARINT_BYTES = 7;

const EMPTY: Uint8Array = new Uint8Array(0);

type Plain = Record<string, unknown>;

/** The message `create()` makes for `layout` with nothing set but its oneofs: every implicit field at its default. */
function zero(layout: MessageLayout): Plain {
  const message: Plain = { $typeName: layout.typeName };
  for (const field of layout.fields) {
    if (field.oneof !== undefined) continue;
    if (field.list) message[field.localName] = [];
    else if (field.map) message[field.localName] = {};
    else if (!field.explicit) message[field.localName] = defaultOf(field.type as number);
  }
  return message;
}

/** `message` with each of its oneofs that no case was read for set empty, as `create()` sets it. */
function withOneofs(layout: MessageLayout, message: Plain): Plain {
  for (const oneof of layout.oneofs) message[oneof] ??= { case: undefined };
  return message;
}

/** A scalar type's default. */
function defaultOf(type: number): unknown {
  switch (type) {
    case STRING:
      return "";
    case BYTES:
      return EMPTY;
    case BOOL:
      return false;
    case INT32:
    case UINT32:
      return 0;
    default:
      return 0n;
  }
}

/** One field's value at the reader's position (its tag read), or undefined when it is not one read here. */
function value(r: ProtoReader, type: FieldLayout["type"], end: number): unknown {
  if (typeof type !== "number") {
    const valueEnd = r.lengthEnd(end);
    return valueEnd < 0 ? undefined : read(r, type, valueEnd);
  }
  if (type === STRING) return r.string(end);
  if (type === BYTES) return r.field(end);
  const n = r.varint(end);
  if (n < 0) return undefined;
  if (type === BOOL) return n !== 0;
  // int32 and enums: a negative one has ten bytes (already left); uint32 is read whole by fromBinary up to 2^32 - 1.
  if (type === INT32) return n > 0x7fffffff ? undefined : n;
  if (type === UINT32) return n > 0xffffffff ? undefined : n;
  return BigInt(n);
}

/**
 * One entry of a map field into `map`: its key (1) then its value (2), either left out for its default; false for any
 * other layout, a key already in the map (fromBinary keeps the last) or `__proto__` (an accessor on a plain object).
 */
function entry(r: ProtoReader, field: FieldLayout, map: Plain, end: number): boolean {
  const entryEnd = r.lengthEnd(end);
  if (entryEnd < 0) return false;
  const key = r.next(0x0a, entryEnd) ? r.string(entryEnd) : "";
  if (key === undefined || key === "__proto__" || Object.hasOwn(map, key)) return false;
  const type = field.type;
  let v: unknown;
  if (r.at === entryEnd) v = typeof type === "number" ? defaultOf(type) : withOneofs(type, zero(type));
  else if (r.next(field.valueTag, entryEnd)) v = value(r, type, entryEnd);
  if (v === undefined || r.at !== entryEnd) return false;
  map[key] = v;
  return true;
}

/** The message of `layout` from the reader's position to `end`; undefined for a layout not read here. */
function read(r: ProtoReader, layout: MessageLayout, end: number): Plain | undefined {
  const message = zero(layout);
  let last = 0;
  while (r.at < end) {
    const tag = r.varint(end);
    if (tag < 0) return undefined;
    const no = Math.floor(tag / 8);
    const field = layout.byNumber.get(no);
    // Out of order, or a singular field twice (fromBinary keeps the last, or merges a message): left to fromBinary.
    if (field === undefined || field.tag !== tag || no < last || (no === last && !field.list && !field.map)) {
      return undefined;
    }
    last = no;
    const oneof = field.oneof;
    // A second case of the oneof (fromBinary keeps the last): left to fromBinary.
    if (oneof !== undefined && message[oneof] !== undefined) return undefined;
    if (field.map) {
      if (!entry(r, field, message[field.localName] as Plain, end)) return undefined;
      continue;
    }
    const v = value(r, field.type, end);
    if (v === undefined) return undefined;
    if (field.list) (message[field.localName] as unknown[]).push(v);
    else if (oneof !== undefined) message[oneof] = { case: field.localName, value: v };
    else message[field.localName] = v;
  }
  return r.at === end ? withOneofs(layout, message) : undefined;
}

/**
 * `data` decoded when it is one of the layouts of native-tool-call-layouts.ts, exactly as
 * `fromBinary(AgentServerMessageSchema)` would decode it; undefined otherwise.
 */
export function decodeNativeToolMessage(data: Uint8Array): AgentServerMessage | undefined {
  const tag = data[0];
  if (tag !== 0x0a && tag !== 0x12) return undefined;
  const message = read(new ProtoReader(data, 0, VARINT_BYTES), SERVER_MESSAGE, data.length);
  return message as AgentServerMessage | undefined;
}
