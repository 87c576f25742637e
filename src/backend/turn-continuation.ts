/**
 * Continuing a turn whose Run is gone (docs/protocol.md §5.4): the caller sends the tool results of a parked turn, but
 * the turn is no longer open (the instance holding it died, or it expired). When the stored checkpoint covers the
 * history before that turn's user message, the state is the checkpoint plus one new `ConversationTurnStructure` —
 * the user message, the assistant's text and tool calls with their results as steps — sent with `resume_action`,
 * so Cursor receives only the blobs of that one turn instead of the whole history.
 * Guess: the reference documents these structures as the server writes them; that the real service accepts a turn the
 * client appended is unverified live (the emulator accepts it); an `internal` or blob-not-found rejection rebuilds once.
 */
import { clone, create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
  type ConversationStep,
  ConversationStepSchema,
  ConversationTurnStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { AgentMode } from "../gen/agent/v1/enums_pb.js";
import { type SelectedContextSchema, UserMessageSchema } from "../gen/agent/v1/user_message_pb.js";
import type { BlobStore } from "../stores/types.js";
import { PROVIDER_IDENTIFIER } from "./request-context.js";
import type { HistoryMessage, JsonValue } from "./types.js";
import { encodeArgumentsMap } from "./value-codec.js";

type UserHistoryMessage = Extract<HistoryMessage, { role: "user" }>;
/** The assistant and tool messages of the interrupted turn, in order. */
export type TurnStepMessage = Extract<HistoryMessage, { role: "assistant" | "tool" }>;

/** The interrupted turn: its user message and what followed it. */
export interface InterruptedTurn {
  user: UserHistoryMessage;
  steps: readonly TurnStepMessage[];
}

/**
 * The interrupted turn when `messages` after the first `covered` are: assistant/tool messages of the checkpointed
 * turn, then exactly one user message, then assistant message(s) with tool calls and the results of those calls,
 * ending with a tool result. Anything else (a system message, a second user message, a result for a call the turn
 * never made) is undefined: the caller rebuilds instead.
 */
export function interruptedTurnOf(messages: readonly HistoryMessage[], covered: number): InterruptedTurn | undefined {
  if (covered <= 0 || messages.at(-1)?.role !== "tool") return undefined;
  const rest = messages.slice(covered);
  const userIndex = rest.findIndex((message) => message.role === "user");
  const user = rest[userIndex];
  if (user?.role !== "user") return undefined;
  const steps: TurnStepMessage[] = [];
  const calls = new Set<string>();
  for (const [i, message] of rest.entries()) {
    if (message.role === "system" || (message.role === "user" && i !== userIndex)) return undefined;
    if (i <= userIndex || message.role === "user") continue;
    if (message.role === "assistant") for (const call of message.toolCalls) calls.add(call.id);
    else if (!calls.has(message.toolCallId)) return undefined;
    steps.push(message);
  }
  return calls.size > 0 ? { user, steps } : undefined;
}

function parseArgumentsObject(text: string): { [key: string]: JsonValue } {
  try {
    const parsed = JSON.parse(text) as JsonValue;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {
    // Not JSON: kept as one string argument below, as the model produced it.
  }
  return text.trim() === "" ? {} : { input: text };
}

/** The steps of the turn: assistant text, then each tool call with its arguments and the caller's result. */
export function turnSteps(
  steps: readonly TurnStepMessage[],
  modelToolName: (callerName: string) => string,
): ConversationStep[] {
  const results = new Map<string, Extract<TurnStepMessage, { role: "tool" }>>();
  for (const message of steps)
    if (message.role === "tool" && !results.has(message.toolCallId)) results.set(message.toolCallId, message);
  const out: ConversationStep[] = [];
  for (const message of steps) {
    if (message.role !== "assistant") continue;
    if (message.content !== "") {
      out.push(
        create(ConversationStepSchema, { message: { case: "assistantMessage", value: { text: message.content } } }),
      );
    }
    for (const call of message.toolCalls) {
      const name = modelToolName(call.name);
      const result = results.get(call.id);
      const mcpResult =
        result === undefined
          ? { result: { case: "error" as const, value: { error: "No result was provided for this tool call." } } }
          : result.isError === true
            ? { result: { case: "error" as const, value: { error: result.content } } }
            : {
                result: {
                  case: "success" as const,
                  value: { content: [{ content: { case: "text" as const, value: { text: result.content } } }] },
                },
              };
      const args = {
        name,
        toolName: name,
        providerIdentifier: PROVIDER_IDENTIFIER,
        toolCallId: call.id,
        args: encodeArgumentsMap(parseArgumentsObject(call.arguments)),
      };
      out.push(
        create(ConversationStepSchema, {
          message: { case: "toolCall", value: { tool: { case: "mcpToolCall", value: { args, result: mcpResult } } } },
        }),
      );
    }
  }
  return out;
}

/** Inputs of {@link continuedTurnState}. */
export interface ContinuedTurnInput {
  checkpoint: ConversationStateStructure;
  turn: InterruptedTurn;
  blobs: BlobStore;
  messageId: string;
  modelToolName: (callerName: string) => string;
  selectedContext?: MessageInitShape<typeof SelectedContextSchema>;
}

/** The checkpoint plus the interrupted turn as one new turn blob (its user message and steps as blobs too). */
export function continuedTurnState(input: ContinuedTurnInput): ConversationStateStructure {
  const { blobs } = input;
  const user = create(UserMessageSchema, {
    text: input.turn.user.content,
    messageId: input.messageId,
    mode: AgentMode.AGENT,
    ...(input.selectedContext === undefined ? {} : { selectedContext: input.selectedContext }),
  });
  const userId = blobs.put(toBinary(UserMessageSchema, user));
  const stepIds = turnSteps(input.turn.steps, input.modelToolName).map((step) =>
    blobs.put(toBinary(ConversationStepSchema, step)),
  );
  const turn = create(ConversationTurnStructureSchema, {
    turn: { case: "agentConversationTurn", value: { userMessage: userId, steps: stepIds, requestId: input.messageId } },
  });
  const state = clone(ConversationStateStructureSchema, input.checkpoint);
  state.turns = [...state.turns, blobs.put(toBinary(ConversationTurnStructureSchema, turn))];
  return state;
}
