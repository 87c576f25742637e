/**
 * The server messages every turn carries besides its deltas (docs/protocol.md §4.4): `request_context_args`, the
 * `kv_server_message`s (`set_blob_args` for each new blob, `get_blob_args` on a resume), `routed_model`,
 * `turn_ended` and the `conversation_checkpoint_update`. Like streaming-decode.ts, and with the same proto-reader.ts,
 * this reads exactly their usual wire layouts without reflection and builds the same plain objects `fromBinary`
 * would; any other byte (another field, a field out of order or twice, an unknown field, a varint too long for the
 * fields read here) returns undefined and the caller decodes with `fromBinary`, so results and errors stay the
 * library's. A one-token turn decoded seven such messages with `fromBinary`, about 40 KB of reflection objects and
 * field maps per request.
 *
 * The checkpoint is read only when its bytes are exactly the ones `toBinary` writes for the value read (fields in
 * number order, each varint minimal, no zero where proto3 writes none, no unknown field): those bytes are then kept
 * for {@link checkpointBytes}, so the backend stores what it received instead of encoding the value again, and the
 * stored record is the same either way.
 */
import type { AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import type { ConversationStateStructure, ConversationTokenDetails } from "../../gen/agent/v1/conversation_state_pb.js";
import type { ExecServerMessage } from "../../gen/agent/v1/exec_pb.js";
import type { InteractionUpdate, TurnEndedUpdate } from "../../gen/agent/v1/interaction_pb.js";
import { ProtoReader } from "./proto-reader.js";

/**
 * Varints read here have at most seven bytes (< 2^49: a turn's token counts are uint64); a longer one is left to
 * `fromBinary`. A non-minimal one is read, except in a checkpoint, which is then left to `fromBinary` as a whole
 * ({@link checkpointState}).
 */
const VARINT_BYTES = 7;

/**
 * `AgentServerMessage{exec_server_message{id, <message>, exec_id}}` as `fromBinary` builds it: the shape of every exec
 * the fast decoders read (the request context here, an MCP call's args in tool-decode.ts).
 */
export function execServerMessage(
  id: number,
  message: ExecServerMessage["message"],
  execId: string,
): AgentServerMessage {
  return {
    $typeName: "agent.v1.AgentServerMessage",
    message: {
      case: "execServerMessage",
      value: { $typeName: "agent.v1.ExecServerMessage", id, message, execId },
    },
  };
}

const EMPTY: Uint8Array = new Uint8Array(0);

/** `KvServerMessage` (field 4): id, then `get_blob_args` (2) or `set_blob_args` (3). */
function kv(r: ProtoReader, end: number): AgentServerMessage | undefined {
  const id = r.optionalUint32(0x08, end);
  if (id < 0) return undefined;
  const tag = r.byte();
  if (tag !== 0x12 && tag !== 0x1a) return undefined;
  if (r.lengthEnd(end) !== end) return undefined;
  let blobId: Uint8Array | undefined = EMPTY;
  let blobData: Uint8Array | undefined = EMPTY;
  if (r.next(0x0a, end)) {
    blobId = r.field(end);
    if (blobId === undefined) return undefined;
  }
  if (tag === 0x1a && r.next(0x12, end)) {
    blobData = r.field(end);
    if (blobData === undefined) return undefined;
  }
  if (r.at !== end) return undefined;
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
function requestContextArgs(r: ProtoReader, end: number): AgentServerMessage | undefined {
  const id = r.optionalUint32(0x08, end);
  if (id < 0) return undefined;
  if (r.byte() !== 0x52 || r.byte() !== 0) return undefined;
  const execId = r.optionalString(0x7a, end);
  if (execId === undefined || r.at !== end) return undefined;
  return execServerMessage(
    id,
    { case: "requestContextArgs", value: { $typeName: "agent.v1.RequestContextArgs" } },
    execId,
  );
}

const TURN_ENDED_FIELDS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"];

/** `InteractionUpdate` (field 1) holding only `turn_ended` (14, non-negative counts) or `routed_model` (24). */
function interactionUpdate(r: ProtoReader, end: number): AgentServerMessage | undefined {
  let message: InteractionUpdate["message"];
  if (r.next(0x72, end)) {
    if (r.lengthEnd(end) !== end) return undefined;
    const value: Record<string, unknown> = { $typeName: "agent.v1.TurnEndedUpdate" };
    let last = 0;
    while (r.at < end) {
      const tag = r.byte() as number;
      const field = tag >>> 3;
      if ((tag & 7) !== 0 || field <= last || field > 5) return undefined;
      last = field;
      const count = r.varint(end);
      if (count < 0) return undefined;
      value[TURN_ENDED_FIELDS[field - 1] as string] = BigInt(count);
    }
    message = { case: "turnEnded", value: value as TurnEndedUpdate };
  } else if (r.bytes[r.at] === 0xc2 && r.bytes[r.at + 1] === 0x01) {
    r.at += 2;
    if (r.lengthEnd(end) !== end) return undefined;
    let displayName: string | undefined = "";
    if (r.at < end) {
      if (r.byte() !== 0x0a) return undefined;
      displayName = r.string(end);
      if (displayName === undefined || r.at !== end) return undefined;
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
function tokenDetails(r: ProtoReader, end: number): ConversationTokenDetails | undefined {
  const details: ConversationTokenDetails = {
    $typeName: "agent.v1.ConversationTokenDetails",
    usedTokens: 0,
    maxTokens: 0,
  };
  if (r.next(0x08, end)) {
    details.usedTokens = r.uint32(end);
    if (details.usedTokens <= 0) return undefined;
  }
  if (r.next(0x10, end)) {
    details.maxTokens = r.uint32(end);
    if (details.maxTokens <= 0) return undefined;
  }
  return r.at === end ? details : undefined;
}

/**
 * `ConversationStateStructure` (field 3) when its bytes are `toBinary`'s for the value read: the bytes fields, the
 * token details, the mode and the summary count; the string lists, the maps and the step timings go to `fromBinary`.
 */
function checkpoint(r: ProtoReader, end: number): AgentServerMessage | undefined {
  const state = checkpointState(r, end);
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
  return checkpointState(new ProtoReader(data, 0, VARINT_BYTES), data.length);
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

/**
 * The state of {@link checkpoint} from the reader's position to `end`, its bytes kept; undefined for any other layout,
 * including a varint read with more bytes than it needs (the reader's `minimal`), since `toBinary` writes none.
 */
function checkpointState(r: ProtoReader, end: number): ConversationStateStructure | undefined {
  const data = r.bytes;
  const start = r.at;
  const state = plainConversationState([]);
  r.minimal = true;
  let last = 0;
  while (r.at < end) {
    const tag = r.varint(end);
    if (tag < 0) return undefined;
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field < last || (field === last && REPEATED_BYTES[field] === undefined)) return undefined;
    last = field;
    if (wire === 2) {
      const valueEnd = r.lengthEnd(end);
      if (valueEnd < 0) return undefined;
      const repeated = REPEATED_BYTES[field];
      const optional = OPTIONAL_BYTES[field];
      if (repeated !== undefined) state[repeated].push(data.subarray(r.at, valueEnd));
      else if (optional !== undefined) state[optional] = data.subarray(r.at, valueEnd);
      else if (field === 5) {
        const details = tokenDetails(r, valueEnd);
        if (details === undefined) return undefined;
        state.tokenDetails = details;
      } else return undefined;
      r.at = valueEnd;
    } else if (wire === 0 && (field === 10 || field === 17)) {
      // mode: an int32 enum (a negative one is ten bytes: left to fromBinary); the count: a uint32, never 0 here.
      const value = field === 10 ? r.varint(end) : r.uint32(end);
      if (value < 0 || (field === 10 && value > 0x7fffffff) || (field === 17 && value === 0)) return undefined;
      if (field === 10) state.mode = value;
      else state.selfSummaryCount = value;
    } else return undefined;
  }
  if (!r.minimal) return undefined;
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
  const end = data.length;
  const r = new ProtoReader(data, 1, VARINT_BYTES);
  // AgentServerMessage holds nothing but its one case.
  if (r.lengthEnd(end) !== end) return undefined;
  if (tag === 0x22) return kv(r, end);
  if (tag === 0x12) return requestContextArgs(r, end);
  if (tag === 0x0a) return interactionUpdate(r, end);
  return checkpoint(r, end);
}
