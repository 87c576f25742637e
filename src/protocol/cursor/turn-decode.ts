/**
 * The server messages every turn carries besides its deltas (docs/protocol.md §4.4): `request_context_args`, the
 * `kv_server_message`s (`set_blob_args` for each new blob, `get_blob_args` on a resume), `routed_model`,
 * `turn_ended` and the `conversation_checkpoint_update`. Like streaming-decode.ts, this reads exactly their usual
 * wire layouts without reflection and builds the same plain objects `fromBinary` would; any other byte (another
 * field, a field out of order or twice, an unknown field, a varint too long for the fields read here) returns
 * undefined and the caller decodes with `fromBinary`, so results and errors stay the library's. A one-token turn
 * decoded seven such messages with `fromBinary`, about 40 KB of reflection objects and field maps per request.
 *
 * The checkpoint is read only when its bytes are exactly the ones `toBinary` writes for the value read (fields in
 * number order, each varint minimal, no zero where proto3 writes none, no unknown field): those bytes are then kept
 * for {@link checkpointBytes}, so the backend stores what it received instead of encoding the value again, and the
 * stored record is the same either way.
 */
import type { AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import type { ConversationStateStructure, ConversationTokenDetails } from "../../gen/agent/v1/conversation_state_pb.js";
import type { InteractionUpdate, TurnEndedUpdate } from "../../gen/agent/v1/interaction_pb.js";

/** proto3 strings are validated as UTF-8 by `fromBinary`: the same strict decoder here. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Read position (one decode at a time, synchronous). */
let at = 0;
/** False once a varint was read with more bytes than it needs (the checkpoint then is not `toBinary`'s bytes). */
let minimal = true;

/** A varint of at most 7 bytes (< 2^49) at {@link at} before `end`; -1 when longer or truncated. */
function varint(data: Uint8Array, end: number): number {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 7 && at < end; i++) {
    const byte = data[at++] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      if (byte === 0 && i > 0) minimal = false;
      return value;
    }
    scale *= 128;
  }
  return -1;
}

/** A uint32 field's value (wire type 0 read by the caller); -1 when it is not one `fromBinary` reads unchanged. */
function uint32(data: Uint8Array, end: number): number {
  const value = varint(data, end);
  return value > 0xffffffff ? -1 : value;
}

/** The end of a length-delimited field's bytes starting at {@link at}; -1 when it runs past `end`. */
function lengthEnd(data: Uint8Array, end: number): number {
  const length = varint(data, end);
  return length < 0 || at + length > end ? -1 : at + length;
}

/** A message's leading `id = 1` (uint32) at {@link at}: 0 when absent (proto3), -1 when not one `fromBinary` reads. */
function leadingId(data: Uint8Array, end: number): number {
  if (data[at] !== 0x08) return 0;
  at++;
  return uint32(data, end);
}

const EMPTY: Uint8Array = new Uint8Array(0);

/** `KvServerMessage` (field 4): id, then `get_blob_args` (2) or `set_blob_args` (3). */
function kv(data: Uint8Array, end: number): AgentServerMessage | undefined {
  const id = leadingId(data, end);
  if (id < 0) return undefined;
  const tag = data[at++];
  if (tag !== 0x12 && tag !== 0x1a) return undefined;
  const argsEnd = lengthEnd(data, end);
  if (argsEnd !== end) return undefined;
  let blobId = EMPTY;
  let blobData = EMPTY;
  if (at < end && data[at] === 0x0a) {
    at++;
    const idEnd = lengthEnd(data, end);
    if (idEnd < 0) return undefined;
    blobId = data.subarray(at, idEnd);
    at = idEnd;
  }
  if (tag === 0x1a && at < end && data[at] === 0x12) {
    at++;
    const dataEnd = lengthEnd(data, end);
    if (dataEnd < 0) return undefined;
    blobData = data.subarray(at, dataEnd);
    at = dataEnd;
  }
  if (at !== end) return undefined;
  const value =
    tag === 0x12
      ? { case: "getBlobArgs" as const, value: { $typeName: "agent.v1.GetBlobArgs" as const, blobId } }
      : { case: "setBlobArgs" as const, value: { $typeName: "agent.v1.SetBlobArgs" as const, blobId, blobData } };
  return {
    $typeName: "agent.v1.AgentServerMessage",
    message: { case: "kvServerMessage", value: { $typeName: "agent.v1.KvServerMessage", id, message: value } },
  };
}

/** `ExecServerMessage` (field 2) holding an empty `request_context_args` (10), with its id and exec id. */
function requestContextArgs(data: Uint8Array, end: number): AgentServerMessage | undefined {
  const id = leadingId(data, end);
  if (id < 0) return undefined;
  if (data[at] !== 0x52 || data[at + 1] !== 0) return undefined;
  at += 2;
  let execId = "";
  if (at < end && data[at] === 0x7a) {
    at++;
    const idEnd = lengthEnd(data, end);
    if (idEnd < 0) return undefined;
    try {
      execId = utf8.decode(data.subarray(at, idEnd));
    } catch {
      return undefined;
    }
    at = idEnd;
  }
  if (at !== end) return undefined;
  return {
    $typeName: "agent.v1.AgentServerMessage",
    message: {
      case: "execServerMessage",
      value: {
        $typeName: "agent.v1.ExecServerMessage",
        id,
        message: { case: "requestContextArgs", value: { $typeName: "agent.v1.RequestContextArgs" } },
        execId,
      },
    },
  };
}

const TURN_ENDED_FIELDS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"];

/** `InteractionUpdate` (field 1) holding only `turn_ended` (14, non-negative counts) or `routed_model` (24). */
function interactionUpdate(data: Uint8Array, end: number): AgentServerMessage | undefined {
  let message: InteractionUpdate["message"];
  if (data[at] === 0x72) {
    at++;
    if (lengthEnd(data, end) !== end) return undefined;
    const value: Record<string, unknown> = { $typeName: "agent.v1.TurnEndedUpdate" };
    let last = 0;
    while (at < end) {
      const tag = data[at++] as number;
      const field = tag >>> 3;
      if ((tag & 7) !== 0 || field <= last || field > 5) return undefined;
      last = field;
      const count = varint(data, end);
      if (count < 0) return undefined;
      value[TURN_ENDED_FIELDS[field - 1] as string] = BigInt(count);
    }
    message = { case: "turnEnded", value: value as TurnEndedUpdate };
  } else if (data[at] === 0xc2 && data[at + 1] === 0x01) {
    at += 2;
    if (lengthEnd(data, end) !== end) return undefined;
    let displayName = "";
    if (at < end) {
      if (data[at++] !== 0x0a || lengthEnd(data, end) !== end) return undefined;
      try {
        displayName = utf8.decode(data.subarray(at, end));
      } catch {
        return undefined;
      }
    }
    message = { case: "routedModel", value: { $typeName: "agent.v1.RoutedModelUpdate", displayName } };
  } else return undefined;
  return {
    $typeName: "agent.v1.AgentServerMessage",
    message: {
      case: "interactionUpdate",
      value: { $typeName: "agent.v1.InteractionUpdate", message },
    },
  };
}

/** Each checkpoint read here, with its bytes exactly as received (the ones `toBinary` gives for it). */
const receivedBytes = new WeakMap<ConversationStateStructure, Uint8Array>();

/**
 * The bytes `toBinary(ConversationStateStructureSchema, state)` gives, when `state` was read here from exactly those
 * bytes and is unchanged since (the caller reads it as it arrives); undefined for any other state.
 */
export function checkpointBytes(state: ConversationStateStructure): Uint8Array | undefined {
  return receivedBytes.get(state);
}

/** The repeated bytes fields read here, by field number. */
const REPEATED_BYTES: Record<number, "rootPromptMessagesJson" | "turnsOld" | "todos" | "turns" | "summaryArchives"> = {
  1: "rootPromptMessagesJson",
  2: "turnsOld",
  3: "todos",
  8: "turns",
  13: "summaryArchives",
};
const OPTIONAL_BYTES: Record<number, "summary" | "plan" | "summaryArchive"> = {
  6: "summary",
  7: "plan",
  11: "summaryArchive",
};

/** `ConversationTokenDetails`: its two uint32 counts as `toBinary` writes them (a zero is left out); else undefined. */
function tokenDetails(data: Uint8Array, end: number): ConversationTokenDetails | undefined {
  const details: ConversationTokenDetails = {
    $typeName: "agent.v1.ConversationTokenDetails",
    usedTokens: 0,
    maxTokens: 0,
  };
  if (at < end && data[at] === 0x08) {
    at++;
    details.usedTokens = uint32(data, end);
    if (details.usedTokens <= 0) return undefined;
  }
  if (at < end && data[at] === 0x10) {
    at++;
    details.maxTokens = uint32(data, end);
    if (details.maxTokens <= 0) return undefined;
  }
  return at === end ? details : undefined;
}

/**
 * `ConversationStateStructure` (field 3) when its bytes are `toBinary`'s for the value read: the bytes fields, the
 * token details, the mode and the summary count; the string lists, the maps and the step timings go to `fromBinary`.
 */
function checkpoint(data: Uint8Array, end: number): AgentServerMessage | undefined {
  const state = checkpointState(data, end);
  return state === undefined
    ? undefined
    : { $typeName: "agent.v1.AgentServerMessage", message: { case: "conversationCheckpointUpdate", value: state } };
}

/**
 * A stored checkpoint's `ConversationStateStructure`, read as {@link checkpoint} reads one (its bytes kept for
 * {@link checkpointBytes}, so the Run continuing from it sends them without encoding the state again); undefined when
 * the bytes are not such a layout, and the caller decodes with `fromBinary`.
 */
export function readCheckpoint(data: Uint8Array): ConversationStateStructure | undefined {
  at = 0;
  return checkpointState(data, data.length);
}

/**
 * A `ConversationStateStructure` holding only `rootPromptMessagesJson`, every other field at its default, as the
 * plain object `create()` makes (without walking the schema): a rebuild's state, and where the reader starts a
 * checkpoint's.
 */
export function plainConversationState(rootPromptMessagesJson: Uint8Array[]): ConversationStateStructure {
  return {
    $typeName: "agent.v1.ConversationStateStructure",
    rootPromptMessagesJson,
    turnsOld: [],
    todos: [],
    pendingToolCalls: [],
    turns: [],
    previousWorkspaceUris: [],
    fileStates: {},
    summaryArchives: [],
    turnTimings: [],
    fileStatesV2: {},
    subagentStates: {},
    selfSummaryCount: 0,
    readPaths: [],
  };
}

/** The state of {@link checkpoint} from {@link at} to `end`, its bytes kept; undefined for any other layout. */
function checkpointState(data: Uint8Array, end: number): ConversationStateStructure | undefined {
  const start = at;
  const state = plainConversationState([]);
  minimal = true;
  let last = 0;
  while (at < end) {
    const tag = varint(data, end);
    if (tag < 0) return undefined;
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field < last || (field === last && REPEATED_BYTES[field] === undefined)) return undefined;
    last = field;
    if (wire === 2) {
      const valueEnd = lengthEnd(data, end);
      if (valueEnd < 0) return undefined;
      const repeated = REPEATED_BYTES[field];
      const optional = OPTIONAL_BYTES[field];
      if (repeated !== undefined) state[repeated].push(data.subarray(at, valueEnd));
      else if (optional !== undefined) state[optional] = data.subarray(at, valueEnd);
      else if (field === 5) {
        const details = tokenDetails(data, valueEnd);
        if (details === undefined) return undefined;
        state.tokenDetails = details;
      } else return undefined;
      at = valueEnd;
    } else if (wire === 0 && (field === 10 || field === 17)) {
      // mode: an int32 enum (a negative one is ten bytes: left to fromBinary); the count: a uint32, never 0 here.
      const value = field === 10 ? varint(data, end) : uint32(data, end);
      if (value < 0 || (field === 10 && value > 0x7fffffff) || (field === 17 && value === 0)) return undefined;
      if (field === 10) state.mode = value;
      else state.selfSummaryCount = value;
    } else return undefined;
  }
  if (!minimal) return undefined;
  // A whole stored checkpoint (readCheckpoint) is kept as it is: the state's fields already point into it. A
  // checkpoint inside a server message is copied out, so the state does not keep the rest of the message alive.
  receivedBytes.set(state, start === 0 && end === data.length ? data : data.slice(start, end));
  return state;
}

/**
 * `data` decoded when it is one of the layouts above, exactly as `fromBinary(AgentServerMessageSchema)` would decode
 * it; undefined otherwise.
 */
export function decodeTurnMessage(data: Uint8Array): AgentServerMessage | undefined {
  const tag = data[0];
  if (tag !== 0x0a && tag !== 0x12 && tag !== 0x1a && tag !== 0x22) return undefined;
  at = 1;
  // AgentServerMessage holds nothing but its one case.
  if (lengthEnd(data, data.length) !== data.length) return undefined;
  const end = data.length;
  if (tag === 0x22) return kv(data, end);
  if (tag === 0x12) return requestContextArgs(data, end);
  if (tag === 0x0a) return interactionUpdate(data, end);
  return checkpoint(data, end);
}
