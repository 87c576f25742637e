/**
 * Decides how a chat request reaches Cursor (house-style §3, issue 5 "Tools and conversations"):
 * 1. its trailing `tool` messages answer every pending call of a parked turn → resume that turn (same Run);
 * 2. its history extends a conversation we answered before → continue from that conversation's checkpoint;
 * 3. otherwise → a new conversation (the agent client rebuilds state from the full history if needed).
 */
import type {
  AgentClient,
  AgentTurn,
  BackendEvent,
  HistoryMessage,
  ToolResult,
  TurnRequest,
} from "../backend/types.js";
import { fingerprintPrefixes } from "../bridge/fingerprint.js";
import type { ConversationIndex } from "../session/conversation-index.js";
import type { ParkedTurnRegistry } from "../session/parked-turns.js";

/** How the turn was reached, for the access log and tests. */
export type TurnRoute = "resumed" | "continued" | "new";

/** A started (or resumed) segment and what is needed to park it again. */
export interface RoutedTurn {
  route: TurnRoute;
  turn: AgentTurn;
  conversationId: string;
  events: AsyncIterable<BackendEvent>;
}

/** Dependencies of {@link routeTurn}. */
export interface TurnRoutingDeps {
  agentClient: AgentClient;
  parked: ParkedTurnRegistry;
  conversations: ConversationIndex;
  newConversationId: () => string;
}

/** The `tool` messages at the end of the history (after the last assistant message). */
export function trailingToolResults(messages: readonly HistoryMessage[]): ToolResult[] {
  const results: ToolResult[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "tool") break;
    results.unshift({ toolCallId: message.toolCallId, content: message.content, isError: false });
  }
  return results;
}

/** The conversation whose recorded history is the longest proper prefix of `messages`. */
export function findConversation(messages: readonly HistoryMessage[], index: ConversationIndex): string | undefined {
  const prefixes = fingerprintPrefixes(messages);
  for (let i = prefixes.length - 2; i >= 0; i--) {
    const id = index.lookup(prefixes[i] ?? "");
    if (id !== undefined) return id;
  }
  return undefined;
}

/** Starts or resumes the Cursor turn for a request. */
export function routeTurn(
  deps: TurnRoutingDeps,
  request: Omit<TurnRequest, "conversationId">,
  signal: AbortSignal,
): RoutedTurn {
  const results = trailingToolResults(request.messages);
  if (results.length > 0) {
    const entry = deps.parked.take(results.map((r) => r.toolCallId));
    if (entry) {
      return {
        route: "resumed",
        turn: entry.turn,
        conversationId: entry.conversationId,
        events: entry.turn.resume(results, signal),
      };
    }
  }
  const known = findConversation(request.messages, deps.conversations);
  const conversationId = known ?? deps.newConversationId();
  const turn = deps.agentClient.startTurn({ ...request, conversationId });
  return { route: known ? "continued" : "new", turn, conversationId, events: turn.stream(signal) };
}
