/**
 * A turn driven by hand for transport tests: builds a minimal valid run_request (one system-prompt blob referenced by
 * `root_prompt_messages_json`, docs/protocol.md §4.11/§5.3) and answers what the server asks (KV get/set by `id`,
 * `request_context_args` with an empty context, §4.4) so the emulator can finish the turn. This is deliberately not
 * the backend: it only proves the transport carries both directions.
 */
import { createHash, randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
} from "../../../src/gen/agent/v1/agent_pb.js";
import { AgentMode } from "../../../src/gen/agent/v1/enums_pb.js";
import type { RunStream } from "../../../src/protocol/cursor/run-stream.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** The client-side blob store of one hand-driven conversation. */
export class HandBlobs {
  readonly blobs = new Map<string, Uint8Array>();
  put(data: Uint8Array): Uint8Array {
    const id = new Uint8Array(createHash("sha256").update(data).digest());
    this.blobs.set(hex(id), data);
    return id;
  }
  get(id: Uint8Array): Uint8Array | undefined {
    return this.blobs.get(hex(id));
  }
}

/** A minimal valid run_request for a fresh conversation. */
export function runRequest(text: string, blobs: HandBlobs, model = "composer-1"): AgentClientMessage {
  const system = blobs.put(new TextEncoder().encode(JSON.stringify({ role: "system", content: "Be brief." })));
  return create(AgentClientMessageSchema, {
    message: {
      case: "runRequest",
      value: {
        conversationState: { rootPromptMessagesJson: [system] },
        action: {
          action: {
            case: "userMessageAction",
            value: { userMessage: { text, messageId: randomUUID(), mode: AgentMode.AGENT } },
          },
        },
        modelDetails: { modelId: model, displayModelId: model, displayName: model },
        requestedModel: { modelId: model },
        conversationId: randomUUID(),
      },
    },
  });
}

/** The answer to one server message, or undefined when it needs none. */
export function answerFor(message: AgentServerMessage, blobs: HandBlobs): AgentClientMessage | undefined {
  const m = message.message;
  if (m.case === "kvServerMessage") {
    const kv = m.value;
    if (kv.message.case === "getBlobArgs") {
      const data = blobs.get(kv.message.value.blobId);
      return create(AgentClientMessageSchema, {
        message: {
          case: "kvClientMessage",
          value: { id: kv.id, message: { case: "getBlobResult", value: data === undefined ? {} : { blobData: data } } },
        },
      });
    }
    if (kv.message.case === "setBlobArgs") {
      blobs.blobs.set(hex(kv.message.value.blobId), kv.message.value.blobData);
      return create(AgentClientMessageSchema, {
        message: { case: "kvClientMessage", value: { id: kv.id, message: { case: "setBlobResult", value: {} } } },
      });
    }
  }
  if (m.case === "execServerMessage" && m.value.message.case === "requestContextArgs") {
    return create(AgentClientMessageSchema, {
      message: {
        case: "execClientMessage",
        value: {
          id: m.value.id,
          execId: m.value.execId,
          message: {
            case: "requestContextResult",
            value: { result: { case: "success", value: { requestContext: {} } } },
          },
        },
      },
    });
  }
  return undefined;
}

/** `stream_close` after an exec answer (§5.1 step 3). */
export function streamClose(id: number): AgentClientMessage {
  return create(AgentClientMessageSchema, {
    message: { case: "execClientControlMessage", value: { message: { case: "streamClose", value: { id } } } },
  });
}

/** What a hand-driven turn produced. */
export interface HandTurnResult {
  text: string;
  turnEnded: boolean;
  checkpoints: number;
  serverMessages: number;
}

/** Reads the run to its end, answering KV and request-context requests; returns the text and markers seen. */
export async function driveTurn(
  run: RunStream,
  blobs: HandBlobs,
  onMessage?: (message: AgentServerMessage) => void,
): Promise<HandTurnResult> {
  const result: HandTurnResult = { text: "", turnEnded: false, checkpoints: 0, serverMessages: 0 };
  for await (const message of run.messages()) {
    result.serverMessages++;
    onMessage?.(message);
    const m = message.message;
    if (m.case === "interactionUpdate") {
      if (m.value.message.case === "textDelta") result.text += m.value.message.value.text;
      if (m.value.message.case === "turnEnded") result.turnEnded = true;
    }
    if (m.case === "conversationCheckpointUpdate") result.checkpoints++;
    const answer = answerFor(message, blobs);
    if (answer !== undefined) {
      await run.send(answer);
      if (answer.message.case === "execClientMessage") await run.send(streamClose(answer.message.value.id));
    }
  }
  return result;
}
