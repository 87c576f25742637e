/**
 * The answers to a turn's `kv_server_message`s (docs/protocol.md §4.4) as the plain objects `create()` makes for them,
 * built without reflection: a turn answers one for each blob Cursor stores (three in a one-token turn) and a rebuild
 * thousands, and `create()` walks each message's fields and nested inits through the schema. plain-replies.test.ts
 * holds them equal to `create()`'s.
 */
import type { AgentClientMessage } from "../gen/agent/v1/agent_pb.js";
import type { KvClientMessage } from "../gen/agent/v1/kv_pb.js";

/** A `kv_client_message` answering the kv message `id` with `message`. */
function kvAnswer(id: number, message: KvClientMessage["message"]): AgentClientMessage {
  return {
    $typeName: "agent.v1.AgentClientMessage",
    message: { case: "kvClientMessage", value: { $typeName: "agent.v1.KvClientMessage", id, message } },
  };
}

/** `kv_client_message.set_blob_result` (no error) for the kv message `id`. */
export function setBlobAnswer(id: number): AgentClientMessage {
  return kvAnswer(id, { case: "setBlobResult", value: { $typeName: "agent.v1.SetBlobResult" } });
}

/** `kv_client_message.get_blob_result` for the kv message `id`: the blob, or none (an unknown blob). */
export function getBlobAnswer(id: number, blobData: Uint8Array | undefined): AgentClientMessage {
  return kvAnswer(id, {
    case: "getBlobResult",
    value:
      blobData === undefined
        ? { $typeName: "agent.v1.GetBlobResult" }
        : { $typeName: "agent.v1.GetBlobResult", blobData },
  });
}
