/**
 * The client messages a turn sends most are a handful of fixed, tiny layouts: the answers to `kv_server_message`
 * (`set_blob_result`, `get_blob_result` with the blob), `exec_client_control_message.stream_close` / `heartbeat`, and
 * `client_heartbeat` (every parked turn, every few seconds). This writes exactly those layouts without reflection and
 * produces the bytes `toBinary` would; any other message, or one of these carrying an error or unknown fields, returns
 * undefined and the caller encodes with `toBinary`. The mirror of streaming-decode.ts. Allocation profile of a
 * 20-token turn: protobuf encoding of the client's sends was 8.5 % of the bytes allocated, mostly reflection objects.
 *
 * The answer to `request_context_args` (`exec_client_message.request_context_result.success`), which every Run waits
 * for before its first token, is written here too around the `RequestContext`'s own bytes, encoded with `toBinary`
 * once per context object: the backend answers the same object again while the environment, tools and system prompt
 * are the same (backend/request-context.ts), and never changes one once built.
 *
 * The Run's first message, `run_request`, is written by run-request-encode.ts in its common layout.
 */
import { toBinary } from "@bufbuild/protobuf";
import type { AgentClientMessage } from "../../gen/agent/v1/agent_pb.js";
import type { ExecClientMessage } from "../../gen/agent/v1/exec_pb.js";
import { type RequestContext, RequestContextSchema } from "../../gen/agent/v1/request_context_pb.js";
import { fieldSize, hasUnknown, ProtoWriter, varintSize } from "./proto-writer.js";
import { encodeRunRequest } from "./run-request-encode.js";

/** Field tags (field number << 3 | wire type). */
const TAG_KV_CLIENT_MESSAGE = 0x1a; // AgentClientMessage.kv_client_message = 3
const TAG_EXEC_CONTROL = 0x2a; // AgentClientMessage.exec_client_control_message = 5
const TAG_CLIENT_HEARTBEAT = 0x3a; // AgentClientMessage.client_heartbeat = 7
const TAG_ID = 0x08; // KvClientMessage.id, ExecStreamClose.id, ExecHeartbeat.id = 1 (varint)
const TAG_GET_BLOB_RESULT = 0x12; // KvClientMessage.get_blob_result = 2
const TAG_SET_BLOB_RESULT = 0x1a; // KvClientMessage.set_blob_result = 3
const TAG_BLOB_DATA = 0x0a; // GetBlobResult.blob_data = 1
const TAG_STREAM_CLOSE = 0x0a; // ExecClientControlMessage.stream_close = 1
const TAG_EXEC_HEARTBEAT = 0x1a; // ExecClientControlMessage.heartbeat = 3
const TAG_EXEC_CLIENT_MESSAGE = 0x12; // AgentClientMessage.exec_client_message = 2
const TAG_REQUEST_CONTEXT_RESULT = 0x52; // ExecClientMessage.request_context_result = 10
const TAG_EXEC_ID = 0x7a; // ExecClientMessage.exec_id = 15 (string)
const TAG_SUCCESS = 0x0a; // RequestContextResult.success = 1
const TAG_REQUEST_CONTEXT = 0x0a; // RequestContextSuccess.request_context = 1

/** Each context's bytes, encoded once (a context is never changed once built: see the file comment). */
const contextBytes = new WeakMap<RequestContext, Uint8Array>();

function encodedContext(context: RequestContext): Uint8Array {
  let bytes = contextBytes.get(context);
  if (bytes === undefined) {
    bytes = toBinary(RequestContextSchema, context);
    contextBytes.set(context, bytes);
  }
  return bytes;
}

const utf8 = new TextEncoder();

/** Bytes of the `id = 1` field of a uint32 (proto3: nothing for 0). */
function idSize(id: number): number {
  return id === 0 ? 0 : 1 + varintSize(id);
}

/** Writes the `id = 1` field of a uint32 (proto3: nothing for 0). */
function writeId(w: ProtoWriter, id: number): void {
  if (id === 0) return;
  w.byte(TAG_ID);
  w.varint(id);
}

/** `exec_client_message{id, request_context_result{success{request_context}}, exec_id}`; undefined for any other. */
function encodeRequestContextResult(exec: ExecClientMessage): Uint8Array | undefined {
  if (hasUnknown(exec) || !isUint32(exec.id) || exec.localExecutionTimeMs !== undefined) return undefined;
  if (typeof exec.execId !== "string" || exec.message.case !== "requestContextResult") return undefined;
  const result = exec.message.value;
  if (hasUnknown(result) || result.result.case !== "success") return undefined;
  const success = result.result.value;
  const context = success.requestContext;
  if (hasUnknown(success) || context === undefined) return undefined;
  const contextData = encodedContext(context);
  const successSize = fieldSize(contextData.byteLength);
  const resultSize = fieldSize(successSize);
  const execId = exec.execId === "" ? undefined : utf8.encode(exec.execId);
  const inner = idSize(exec.id) + fieldSize(resultSize) + (execId === undefined ? 0 : fieldSize(execId.byteLength));
  return frame(TAG_EXEC_CLIENT_MESSAGE, inner, (w) => {
    writeId(w, exec.id);
    w.byte(TAG_REQUEST_CONTEXT_RESULT);
    w.varint(resultSize);
    w.byte(TAG_SUCCESS);
    w.varint(successSize);
    w.field(TAG_REQUEST_CONTEXT, contextData);
    if (execId !== undefined) w.field(TAG_EXEC_ID, execId);
  });
}

/** `tag`, length, then `inner` bytes of a nested message of `innerSize` bytes, inside a top-level field. */
function frame(tag: number, innerSize: number, fill: (w: ProtoWriter) => void): Uint8Array {
  const w = new ProtoWriter(1 + varintSize(innerSize) + innerSize);
  w.byte(tag);
  w.varint(innerSize);
  fill(w);
  return w.bytes;
}

/** A valid uint32 as protobuf-es holds it (anything else is left to `toBinary`, which reports it). */
function isUint32(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 0xffffffff;
}

/** The bytes `toBinary(AgentClientMessageSchema, message)` gives, for the layouts above; undefined for any other. */
export function encodeStreamingMessage(message: AgentClientMessage): Uint8Array | undefined {
  if (hasUnknown(message)) return undefined;
  const m = message.message;
  switch (m.case) {
    case "clientHeartbeat":
      return hasUnknown(m.value) ? undefined : new Uint8Array([TAG_CLIENT_HEARTBEAT, 0]);
    case "kvClientMessage": {
      const kv = m.value;
      if (hasUnknown(kv) || !isUint32(kv.id)) return undefined;
      const result = kv.message;
      if (result.case === "setBlobResult") {
        if (hasUnknown(result.value) || result.value.error !== undefined) return undefined;
        const inner = idSize(kv.id) + 2;
        return frame(TAG_KV_CLIENT_MESSAGE, inner, (w) => {
          writeId(w, kv.id);
          w.byte(TAG_SET_BLOB_RESULT);
          w.byte(0);
        });
      }
      if (result.case === "getBlobResult") {
        const value = result.value;
        if (hasUnknown(value) || value.error !== undefined) return undefined;
        const data = value.blobData;
        const resultSize = data === undefined ? 0 : 1 + varintSize(data.byteLength) + data.byteLength;
        const inner = idSize(kv.id) + 1 + varintSize(resultSize) + resultSize;
        return frame(TAG_KV_CLIENT_MESSAGE, inner, (w) => {
          writeId(w, kv.id);
          w.byte(TAG_GET_BLOB_RESULT);
          w.varint(resultSize);
          if (data === undefined) return;
          w.byte(TAG_BLOB_DATA);
          w.varint(data.byteLength);
          w.bytes.set(data, w.at);
          w.at += data.byteLength;
        });
      }
      return undefined;
    }
    case "execClientMessage":
      return encodeRequestContextResult(m.value);
    case "runRequest":
      return encodeRunRequest(m.value);
    case "execClientControlMessage": {
      const control = m.value;
      if (hasUnknown(control)) return undefined;
      const which = control.message;
      if (which.case !== "streamClose" && which.case !== "heartbeat") return undefined;
      const id = which.value.id;
      if (hasUnknown(which.value) || !isUint32(id)) return undefined;
      const bodySize = idSize(id);
      const inner = 1 + varintSize(bodySize) + bodySize;
      return frame(TAG_EXEC_CONTROL, inner, (w) => {
        w.byte(which.case === "streamClose" ? TAG_STREAM_CLOSE : TAG_EXEC_HEARTBEAT);
        w.varint(bodySize);
        writeId(w, id);
      });
    }
    default:
      return undefined;
  }
}
