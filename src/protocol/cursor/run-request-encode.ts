/**
 * Every turn opens a Run whose first client message is `AgentClientMessage{run_request}`. A CPU profile of one request
 * at a time put encoding it with `toBinary` at about 49 µs (and building it with `create()` at about 54 µs) of the
 * ~900 µs serve spends before the Run leaves: the largest piece of serve's own code on the way to the first token.
 * This writes the common request without reflection, producing exactly the bytes `toBinary` would
 * (run-request-encode.test.ts and backend/plain-run-request.test.ts hold it equal over many variants):
 *
 * - `conversation_state`: a stored checkpoint's bytes as they are when they are `toBinary`'s for the state read from
 *   them (turn-decode.ts, `readCheckpoint`), a state holding only `root_prompt_messages_json` (a rebuild) written
 *   here, any other state with `toBinary`;
 * - `action.user_message_action.user_message` with text, message id, mode (no selected context, nothing else);
 * - `requested_model` with model id, max mode and parameters (no credentials);
 * - `conversation_id`, `conversation_group_id`, `run_id`, `client_supports_routed_model_update`.
 *
 * Any other field set, another action (resume), images, or unknown fields anywhere return undefined and the caller
 * encodes the whole message with `toBinary`. Field numbers are proto/agent/v1/agent.proto's, actions.proto's,
 * user_message.proto's, models.proto's and conversation_state.proto's.
 */
import { toBinary } from "@bufbuild/protobuf";
import type { AgentRunRequest } from "../../gen/agent/v1/agent_pb.js";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
} from "../../gen/agent/v1/conversation_state_pb.js";
import { fieldSize, implicitSize, ProtoWriter, utf8Length, varintSize } from "./proto-writer.js";
import { checkpointBytes } from "./turn-decode.js";

/** Field tags (field number << 3 | wire type), as varint bytes. */
const TAG_RUN_REQUEST = 0x0a; // AgentClientMessage.run_request = 1
const TAG_CONVERSATION_STATE = 0x0a; // AgentRunRequest.conversation_state = 1
const TAG_ACTION = 0x12; // AgentRunRequest.action = 2
const TAG_CONVERSATION_ID = 0x2a; // AgentRunRequest.conversation_id = 5
const TAG_REQUESTED_MODEL = 0x4a; // AgentRunRequest.requested_model = 9
const TAG_CONVERSATION_GROUP_ID = [0x82, 0x01]; // AgentRunRequest.conversation_group_id = 16
const TAG_RUN_ID = [0xca, 0x01]; // AgentRunRequest.run_id = 25
const TAG_ROUTED_MODEL_UPDATE = [0xe0, 0x01]; // AgentRunRequest.client_supports_routed_model_update = 28 (varint)
const TAG_ROOT_PROMPT = 0x0a; // ConversationStateStructure.root_prompt_messages_json = 1
const TAG_USER_MESSAGE_ACTION = 0x0a; // ConversationAction.user_message_action = 1
const TAG_USER_MESSAGE = 0x0a; // UserMessageAction.user_message = 1
const TAG_TEXT = 0x0a; // UserMessage.text = 1
const TAG_MESSAGE_ID = 0x12; // UserMessage.message_id = 2
const TAG_MODE = 0x20; // UserMessage.mode = 4 (varint)
const TAG_STATE_BLOB_ID = 0x52; // UserMessage.conversation_state_blob_id = 10
const TAG_MODEL_ID = 0x0a; // RequestedModel.model_id = 1
const TAG_MAX_MODE = 0x10; // RequestedModel.max_mode = 2 (varint)
const TAG_PARAMETER = 0x1a; // RequestedModel.parameters = 3
const TAG_PARAMETER_ID = 0x0a; // RequestedModelParameter.id = 1
const TAG_PARAMETER_VALUE = 0x12; // RequestedModelParameter.value = 2

/**
 * True when `message` sets nothing but `keys` (and `$typeName`): every other property is undefined, or an empty
 * `$unknown`, or a default the caller allows with `isDefault`.
 */
function only(message: object, keys: readonly string[], isDefault?: (key: string, value: unknown) => boolean): boolean {
  // for…in and not Object.entries: the latter allocated more than the whole encoding.
  for (const key in message) {
    const value = (message as Record<string, unknown>)[key];
    if (key === "$typeName" || value === undefined || keys.includes(key)) continue;
    if (key === "$unknown" && Array.isArray(value) && value.length === 0) continue;
    if (isDefault?.(key, value) === true) continue;
    return false;
  }
  return true;
}

const STATE_MAPS = ["fileStates", "fileStatesV2", "subagentStates"];

/** The state's bytes when it holds nothing but root prompt blob ids (a rebuild's state); else undefined. */
function rootOnlyState(state: ConversationStateStructure): Uint8Array | undefined {
  const rootOnly = only(state, ["rootPromptMessagesJson"], (key, value) => {
    if (Array.isArray(value)) return value.length === 0;
    if (STATE_MAPS.includes(key)) return Object.keys(value as object).length === 0;
    return key === "selfSummaryCount" && value === 0;
  });
  if (!rootOnly) return undefined;
  let size = 0;
  for (const id of state.rootPromptMessagesJson) size += fieldSize(id.byteLength);
  const w = new ProtoWriter(size);
  for (const id of state.rootPromptMessagesJson) w.field(TAG_ROOT_PROMPT, id);
  return w.bytes;
}

/** The bytes `toBinary(ConversationStateStructureSchema, state)` gives, with as little reflection as possible. */
function stateBytes(state: ConversationStateStructure): Uint8Array {
  return checkpointBytes(state) ?? rootOnlyState(state) ?? toBinary(ConversationStateStructureSchema, state);
}

/** The `AgentRunRequest` fields written here. */
const RUN_FIELDS = [
  "conversationState",
  "action",
  "requestedModel",
  "conversationId",
  "conversationGroupId",
  "runId",
  "clientSupportsRoutedModelUpdate",
];

/** The bytes `toBinary(AgentClientMessageSchema, {run_request: run})` gives for the layout above; else undefined. */
export function encodeRunRequest(run: AgentRunRequest): Uint8Array | undefined {
  if (!only(run, RUN_FIELDS)) return undefined;
  // The action: user_message_action{user_message{text, message_id, mode, conversation_state_blob_id}}.
  const action = run.action;
  if (action === undefined || !only(action, ["action"]) || action.action.case !== "userMessageAction") return undefined;
  const messageAction = action.action.value;
  const user = messageAction.userMessage;
  if (user === undefined || !only(messageAction, ["userMessage"])) return undefined;
  if (!only(user, ["text", "messageId", "mode", "conversationStateBlobId"])) return undefined;
  const mode = user.mode;
  if (!Number.isInteger(mode) || mode < 0 || mode > 0x7fffffff) return undefined;
  // The model: model_id, max_mode, parameters{id, value}.
  const model = run.requestedModel;
  if (model !== undefined) {
    if (!only(model, ["modelId", "maxMode", "parameters", "credentials"]) || model.credentials.case !== undefined)
      return undefined;
    for (const parameter of model.parameters) if (!only(parameter, ["id", "value"])) return undefined;
  }

  const textLength = utf8Length(user.text);
  const messageIdLength = utf8Length(user.messageId);
  const blobId = user.conversationStateBlobId;
  const userSize =
    implicitSize(textLength) +
    implicitSize(messageIdLength) +
    (mode === 0 ? 0 : 1 + varintSize(mode)) +
    implicitSize(blobId.byteLength);
  const messageActionSize = fieldSize(userSize);
  const actionSize = fieldSize(messageActionSize);

  const modelIdLength = model === undefined ? 0 : utf8Length(model.modelId);
  const parameters = model?.parameters ?? [];
  const parameterLengths: number[] = [];
  let modelSize = implicitSize(modelIdLength) + (model?.maxMode === true ? 2 : 0);
  for (const { id, value } of parameters) {
    const idLength = utf8Length(id);
    const valueLength = utf8Length(value);
    parameterLengths.push(idLength, valueLength);
    modelSize += fieldSize(implicitSize(idLength) + implicitSize(valueLength));
  }

  const state = run.conversationState === undefined ? undefined : stateBytes(run.conversationState);
  const { conversationId, conversationGroupId: groupId, runId } = run;
  const conversationIdLength = conversationId === undefined ? 0 : utf8Length(conversationId);
  const groupIdLength = groupId === undefined ? 0 : utf8Length(groupId);
  const runIdLength = runId === undefined ? 0 : utf8Length(runId);
  const routed = run.clientSupportsRoutedModelUpdate;

  const runSize =
    (state === undefined ? 0 : fieldSize(state.byteLength)) +
    fieldSize(actionSize) +
    (conversationId === undefined ? 0 : fieldSize(conversationIdLength)) +
    (model === undefined ? 0 : fieldSize(modelSize)) +
    (groupId === undefined ? 0 : 1 + fieldSize(groupIdLength)) +
    (runId === undefined ? 0 : 1 + fieldSize(runIdLength)) +
    (routed === undefined ? 0 : 3);

  const w = new ProtoWriter(fieldSize(runSize));
  w.tag(TAG_RUN_REQUEST);
  w.varint(runSize);
  if (state !== undefined) w.field(TAG_CONVERSATION_STATE, state);
  w.tag(TAG_ACTION);
  w.varint(actionSize);
  w.tag(TAG_USER_MESSAGE_ACTION);
  w.varint(messageActionSize);
  w.tag(TAG_USER_MESSAGE);
  w.varint(userSize);
  w.implicitString(TAG_TEXT, user.text, textLength);
  w.implicitString(TAG_MESSAGE_ID, user.messageId, messageIdLength);
  if (mode !== 0) {
    w.tag(TAG_MODE);
    w.varint(mode);
  }
  w.implicit(TAG_STATE_BLOB_ID, blobId);
  // Optional (explicit presence) strings: written when set, even empty.
  if (conversationId !== undefined) w.string(TAG_CONVERSATION_ID, conversationId, conversationIdLength);
  if (model !== undefined) {
    w.tag(TAG_REQUESTED_MODEL);
    w.varint(modelSize);
    w.implicitString(TAG_MODEL_ID, model.modelId, modelIdLength);
    if (model.maxMode) {
      w.tag(TAG_MAX_MODE);
      w.tag(1);
    }
    for (const [i, { id, value }] of parameters.entries()) {
      const idLength = parameterLengths[2 * i] as number;
      const valueLength = parameterLengths[2 * i + 1] as number;
      w.tag(TAG_PARAMETER);
      w.varint(implicitSize(idLength) + implicitSize(valueLength));
      w.implicitString(TAG_PARAMETER_ID, id, idLength);
      w.implicitString(TAG_PARAMETER_VALUE, value, valueLength);
    }
  }
  if (groupId !== undefined) w.string(TAG_CONVERSATION_GROUP_ID, groupId, groupIdLength);
  if (runId !== undefined) w.string(TAG_RUN_ID, runId, runIdLength);
  if (routed !== undefined) {
    w.tag(TAG_ROUTED_MODEL_UPDATE);
    w.tag(routed ? 1 : 0);
  }
  return w.bytes;
}
