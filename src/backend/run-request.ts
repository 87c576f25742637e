/**
 * What the first frame of a turn says (docs/protocol.md §4.5, §4.11, §5.4): either continue from the stored
 * checkpoint with only the new user message, or rebuild the state from the caller's full history as root prompt
 * blobs. A turn whose new input is only tool results for a turn that is gone continues from the checkpoint with that
 * turn appended (turn-continuation.ts) when the checkpoint covers the history before it; otherwise it is rebuilt, and
 * both are sent with `resume_action`.
 */
import { randomUUID } from "node:crypto";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { ConversationActionSchema } from "../gen/agent/v1/actions_pb.js";
import { type AgentClientMessage, AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { AgentMode } from "../gen/agent/v1/enums_pb.js";
import type { SelectedContextSchema } from "../gen/agent/v1/user_message_pb.js";
import { plainConversationState, readCheckpoint } from "../protocol/cursor/cursor-api.js";
import type { BlobStore, ConversationRecord } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import { imageExtension, sniffImage } from "../util/image.js";
import { historyFingerprint } from "./history-fingerprint.js";
import { sanitizeToolName } from "./tool-names.js";
import { continuedTurnState, type InterruptedTurn, interruptedTurnOf } from "./turn-continuation.js";
import type { AgentModeName, HistoryMessage, ImageAttachment, JsonValue, ModelSelection } from "./types.js";

/** How a turn starts. */
export type TurnPlan =
  | {
      kind: "continue";
      checkpoint: ConversationStateStructure;
      userText: string;
      userImages?: readonly ImageAttachment[];
    }
  | {
      /** The caller's tool results for a turn whose Run is gone: the checkpoint plus that turn, `resume_action`. */
      kind: "continue-turn";
      checkpoint: ConversationStateStructure;
      turn: InterruptedTurn;
    }
  | {
      kind: "rebuild";
      history: readonly HistoryMessage[];
      userText: string | undefined;
      userImages?: readonly ImageAttachment[];
    };

/** The caller's system prompt: every system message, in order, joined by blank lines. */
export function systemPromptOf(messages: readonly HistoryMessage[]): string {
  return messages
    .filter((message) => message.role === "system")
    .map((message) => message.content)
    .join("\n\n");
}

/** The rebuild plan: everything but a trailing user message goes into the root prompt. */
export function rebuildPlan(messages: readonly HistoryMessage[]): TurnPlan {
  const last = messages.at(-1);
  if (last?.role === "user") {
    return { kind: "rebuild", history: messages.slice(0, -1), userText: last.content, ...imagesOf(last) };
  }
  return { kind: "rebuild", history: messages, userText: undefined };
}

/**
 * Continues from `record` when `messages` extend the history its checkpoint covers and add exactly one new user
 * message at the end (assistant/tool messages in between were produced inside the checkpointed turn), or end with the
 * tool results of one turn after that history (see {@link interruptedTurnOf}); otherwise rebuilds. The caller has
 * already checked that the record's blobs are present. `historyKeys`, when given, are `historyKeyPrefixes(messages)`
 * (so the covered prefix is not hashed again).
 */
export function planTurn(
  messages: readonly HistoryMessage[],
  record: ConversationRecord | undefined,
  historyKeys?: readonly string[],
): TurnPlan {
  if (messages.length === 0) throw new ProxyError("invalid_request", "A turn needs at least one message.");
  const last = messages.at(-1);
  if (record === undefined) return rebuildPlan(messages);
  const covered = record.coveredMessages;
  if (covered === 0 || covered > messages.length - 1) return rebuildPlan(messages);
  let turn: InterruptedTurn | undefined;
  if (last?.role === "tool") {
    turn = interruptedTurnOf(messages, covered);
    if (turn === undefined) return rebuildPlan(messages);
  } else {
    if (last?.role !== "user") return rebuildPlan(messages);
    const between = messages.slice(covered, -1);
    if (between.some((message) => message.role === "user" || message.role === "system")) return rebuildPlan(messages);
  }
  const coveredKey = historyKeys?.[covered - 1] ?? historyFingerprint(messages.slice(0, covered));
  if (coveredKey !== record.fingerprint) return rebuildPlan(messages);
  let checkpoint: ConversationStateStructure;
  try {
    // Read without reflection when the bytes are toBinary's for it: the Run then sends them as they are.
    checkpoint = readCheckpoint(record.checkpoint) ?? fromBinary(ConversationStateStructureSchema, record.checkpoint);
  } catch {
    return rebuildPlan(messages);
  }
  if (turn !== undefined) return { kind: "continue-turn", checkpoint, turn };
  if (last?.role !== "user") return rebuildPlan(messages);
  return { kind: "continue", checkpoint, userText: last.content, ...imagesOf(last) };
}

function imagesOf(message: HistoryMessage): { userImages?: readonly ImageAttachment[] } {
  return message.role === "user" && message.images !== undefined && message.images.length > 0
    ? { userImages: message.images }
    : {};
}

/**
 * `UserMessage.selected_context` carrying the images inline, as clients that support image input live send them
 * (docs/protocol.md §5.5): `SelectedImage{data, uuid, path, mime_type, dimension}`.
 */
export function selectedImages(images: readonly ImageAttachment[]): MessageInitShape<typeof SelectedContextSchema> {
  return {
    selectedImages: images.map((image, index) => {
      const sniffed = sniffImage(image.data);
      const mimeType = sniffed?.mimeType ?? image.mimeType;
      const extension = sniffed === undefined ? "img" : imageExtension(sniffed.mimeType);
      const { width, height } = sniffed ?? {};
      return {
        dataOrBlobId: { case: "data", value: image.data },
        uuid: randomUUID(),
        path: `image-${index + 1}.${extension}`,
        mimeType,
        ...(width !== undefined && height !== undefined ? { dimension: { width, height } } : {}),
      };
    }),
  };
}

/** Hex ids the checkpoint references directly that the blob store lacks (a cheap pre-flight check). */
export function missingCheckpointBlobs(checkpoint: ConversationStateStructure, blobs: BlobStore): number {
  return [...checkpoint.rootPromptMessagesJson, ...checkpoint.turns].filter((id) => !blobs.has(id)).length;
}

/** Tool call id → tool name over the whole history, built once (a lookup per tool message made rebuilds quadratic). */
export function toolNamesOf(history: readonly HistoryMessage[]): ReadonlyMap<string, string> {
  const names = new Map<string, string>();
  for (const message of history) {
    if (message.role !== "assistant") continue;
    // The first call with an id wins, as the earlier linear search did.
    for (const call of message.toolCalls) if (!names.has(call.id)) names.set(call.id, call.name);
  }
  return names;
}

function parseArguments(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** One history message as a root prompt JSON message (§4.11: EPH's `{"role":…,"content":[parts]}` form). */
export function toRootPromptMessage(message: HistoryMessage, toolNames: ReadonlyMap<string, string>): JsonValue {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content };
    case "user": {
      // Images of earlier turns travel with their message, as AI SDK v5 image parts (base64 data + mediaType).
      const images = (message.images ?? []).map((image) => ({
        type: "image",
        image: Buffer.from(image.data).toString("base64"),
        mediaType: image.mimeType,
      }));
      return { role: "user", content: [{ type: "text", text: message.content }, ...images] };
    }
    case "assistant": {
      const parts: JsonValue[] = message.content === "" ? [] : [{ type: "text", text: message.content }];
      for (const call of message.toolCalls) {
        parts.push({
          type: "tool-call",
          toolCallId: call.id,
          toolName: call.name,
          args: parseArguments(call.arguments),
        });
      }
      return { role: "assistant", content: parts };
    }
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId,
            toolName: toolNames.get(message.toolCallId) ?? "",
            result: message.content,
            ...(message.isError === true ? { isError: true } : {}),
          },
        ],
      };
  }
}

/**
 * The conversation state of a rebuild: the system prompt and every history message as JSON blobs referenced by
 * `root_prompt_messages_json` (blob ids, never inline bytes, §4.11).
 */
export function buildRootState(history: readonly HistoryMessage[], blobs: BlobStore): ConversationStateStructure {
  const encoder = new TextEncoder();
  const ids: Uint8Array[] = [];
  const systemPrompt = systemPromptOf(history);
  if (systemPrompt !== "")
    ids.push(blobs.put(encoder.encode(JSON.stringify({ role: "system", content: systemPrompt }))));
  const toolNames = toolNamesOf(history);
  for (const message of history) {
    if (message.role === "system") continue;
    ids.push(blobs.put(encoder.encode(JSON.stringify(toRootPromptMessage(message, toolNames)))));
  }
  return plainConversationState(ids);
}

/** Inputs of {@link buildRunRequest}. */
export interface RunRequestInput {
  plan: TurnPlan;
  conversationId: string;
  /**
   * The model as `requested_model` names it: a base id with parameters, or a flat id alone (`auto` already sent as
   * `default`). No `model_details` goes with it (docs/protocol.md §6.1: a bare base id there is `not_found`).
   */
  model: Pick<ModelSelection, "modelId" | "parameters" | "maxMode">;
  blobs: BlobStore;
  messageId: string;
  /** `run_id` of this Run; a fresh random UUID when omitted. */
  runId?: string;
  /** The name a caller tool was declared under (a `continue-turn` plan's tool calls). @default sanitizeToolName */
  modelToolName?: (callerName: string) => string;
  /** @default "agent" */
  mode?: AgentModeName | undefined;
}

const AGENT_MODES: Record<AgentModeName, AgentMode> = {
  agent: AgentMode.AGENT,
  ask: AgentMode.ASK,
  plan: AgentMode.PLAN,
};

/** The conversation state the plan sends. */
function stateOf(input: RunRequestInput): ConversationStateStructure {
  const { plan } = input;
  switch (plan.kind) {
    case "continue":
      return plan.checkpoint;
    case "rebuild":
      return buildRootState(plan.history, input.blobs);
    case "continue-turn": {
      const images = plan.turn.user.images;
      return continuedTurnState({
        checkpoint: plan.checkpoint,
        turn: plan.turn,
        blobs: input.blobs,
        messageId: input.messageId,
        modelToolName: input.modelToolName ?? sanitizeToolName,
        ...(images === undefined || images.length === 0 ? {} : { selectedContext: selectedImages(images) }),
      });
    }
  }
}

/**
 * Builds `AgentClientMessage{run_request}` for the plan. The common request (a rebuild or a continued checkpoint with
 * a user message and no images) is built as the plain objects `create()` makes, without its reflection (about 54 µs
 * of the ~900 µs serve spent before a Run left, one request at a time), and protocol/cursor/run-request-encode.ts
 * writes it without `toBinary`'s; plain-run-request.test.ts holds the objects equal to `create()`'s and the bytes to
 * `toBinary`'s. Images, a continued turn and the resume action are built with `create()`.
 */
export function buildRunRequest(input: RunRequestInput): AgentClientMessage {
  const { plan } = input;
  if (plan.kind !== "continue-turn" && plan.userText !== undefined && plan.userImages === undefined) {
    return plainRunRequest(input, plan.userText);
  }
  const state = stateOf(input);
  const action =
    plan.kind === "continue-turn" || plan.userText === undefined
      ? create(ConversationActionSchema, { action: { case: "resumeAction", value: {} } })
      : create(ConversationActionSchema, {
          action: {
            case: "userMessageAction",
            value: {
              userMessage: {
                text: plan.userText,
                messageId: input.messageId,
                mode: AGENT_MODES[input.mode ?? "agent"],
                ...(plan.userImages === undefined ? {} : { selectedContext: selectedImages(plan.userImages) }),
              },
            },
          },
        });
  return create(AgentClientMessageSchema, {
    message: {
      case: "runRequest",
      value: {
        conversationState: state,
        action,
        requestedModel: {
          modelId: input.model.modelId,
          parameters: input.model.parameters.map(({ id, value }) => ({ id, value })),
          ...(input.model.maxMode ? { maxMode: true } : {}),
        },
        conversationId: input.conversationId,
        // As the official CLI sends them (docs/protocol.md §4.5): the group is the conversation itself.
        conversationGroupId: input.conversationId,
        runId: input.runId ?? randomUUID(),
        // Cursor then names the model a router (`auto`) picked (routed_model, cursor-protocol-addendum-2.md §4).
        clientSupportsRoutedModelUpdate: true,
      },
    },
  });
}

/** The common run request ({@link buildRunRequest}) as the plain objects `create()` makes for it. */
function plainRunRequest(input: RunRequestInput, text: string): AgentClientMessage {
  const { model } = input;
  return {
    $typeName: "agent.v1.AgentClientMessage",
    message: {
      case: "runRequest",
      value: {
        $typeName: "agent.v1.AgentRunRequest",
        conversationState: stateOf(input),
        action: {
          $typeName: "agent.v1.ConversationAction",
          action: {
            case: "userMessageAction",
            value: {
              $typeName: "agent.v1.UserMessageAction",
              userMessage: {
                $typeName: "agent.v1.UserMessage",
                text,
                messageId: input.messageId,
                mode: AGENT_MODES[input.mode ?? "agent"],
                conversationStateBlobId: new Uint8Array(0),
              },
            },
          },
        },
        conversationId: input.conversationId,
        requestedModel: {
          $typeName: "agent.v1.RequestedModel",
          modelId: model.modelId,
          maxMode: model.maxMode === true,
          parameters: model.parameters.map(({ id, value }) => ({
            $typeName: "agent.v1.RequestedModelParameter",
            id,
            value,
          })),
          credentials: { case: undefined },
        },
        conversationGroupId: input.conversationId,
        runId: input.runId ?? randomUUID(),
        clientSupportsRoutedModelUpdate: true,
      },
    },
  };
}
