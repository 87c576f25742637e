/**
 * The bulk of a streaming turn (docs/protocol.md §4.6) is three small messages: `interaction_update.text_delta`,
 * `token_delta` and `heartbeat`. This reads exactly those wire layouts without reflection and builds the same plain
 * objects `fromBinary` would (reading with proto-reader.ts, as turn-decode.ts does); any other byte (another field, a
 * repeated or unknown field, a varint over four bytes, a bool other than 0 or 1, invalid UTF-8) returns undefined and
 * the caller decodes with `fromBinary`, so results and errors stay the library's. Profile of 200 streams: protobuf
 * decoding was 12 % of the bridge's CPU.
 */
import type { AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import type { InteractionUpdate } from "../../gen/agent/v1/interaction_pb.js";
import { ProtoReader } from "./proto-reader.js";

/** Field tags (field number << 3 | wire type 2) of the layouts read here. */
const TAG_INTERACTION_UPDATE = 0x0a;
const TAG_TEXT_DELTA = 0x0a;
const TAG_TOKEN_DELTA = 0x42;
const TAG_HEARTBEAT = 0x6a;
const TAG_TEXT = 0x0a;
const TAG_IS_SERVER_NOTICE = 0x10;
const TAG_TOKENS = 0x08;

/**
 * Varints read here have at most four bytes (< 2^28): a token count is an int32, and a longer varint, even a small
 * value's, is left to `fromBinary`. A non-minimal one (0x84 0x00 for 4) is read: `fromBinary` reads the same value,
 * and no bytes are kept here.
 */
const VARINT_BYTES = 4;

function update(message: InteractionUpdate["message"]): AgentServerMessage {
  return {
    $typeName: "agent.v1.AgentServerMessage",
    message: { case: "interactionUpdate", value: { $typeName: "agent.v1.InteractionUpdate", message } },
  };
}

function textDelta(r: ProtoReader, end: number): AgentServerMessage | undefined {
  let text = "";
  let isServerNotice = false;
  if (r.next(TAG_TEXT, end)) {
    const value = r.string(end);
    if (value === undefined) return undefined;
    text = value;
  }
  if (r.next(TAG_IS_SERVER_NOTICE, end)) {
    const flag = r.byte();
    if (flag !== 0 && flag !== 1) return undefined;
    isServerNotice = flag === 1;
  }
  if (r.at !== end) return undefined;
  return update({ case: "textDelta", value: { $typeName: "agent.v1.TextDeltaUpdate", text, isServerNotice } });
}

function tokenDelta(r: ProtoReader, end: number): AgentServerMessage | undefined {
  let tokens = 0;
  if (r.at < end) {
    if (r.byte() !== TAG_TOKENS) return undefined;
    tokens = r.varint(end);
    if (tokens < 0) return undefined;
  }
  if (r.at !== end) return undefined;
  return update({ case: "tokenDelta", value: { $typeName: "agent.v1.TokenDeltaUpdate", tokens } });
}

/**
 * `data` decoded when it is one of the three streaming layouts, exactly as `fromBinary(AgentServerMessageSchema)`
 * would decode it; undefined otherwise.
 */
export function decodeStreamingMessage(data: Uint8Array): AgentServerMessage | undefined {
  if (data[0] !== TAG_INTERACTION_UPDATE) return undefined;
  const end = data.length;
  const r = new ProtoReader(data, 1, VARINT_BYTES);
  // AgentServerMessage holds nothing but its interaction_update, and that holds nothing but one case.
  if (r.lengthEnd(end) !== end) return undefined;
  const tag = r.byte();
  const inner = r.varint(end);
  if (inner < 0 || r.at + inner !== end) return undefined;
  if (tag === TAG_TEXT_DELTA) return textDelta(r, end);
  if (tag === TAG_TOKEN_DELTA) return tokenDelta(r, end);
  if (tag === TAG_HEARTBEAT && inner === 0) {
    return update({ case: "heartbeat", value: { $typeName: "agent.v1.HeartbeatUpdate" } });
  }
  return undefined;
}
