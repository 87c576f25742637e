/**
 * Whether a request that answers a parked turn's calls continues the very conversation the turn parked in. The tool
 * call ids alone do not say so: a client may send them with an edited history (an earlier message changed, the
 * call's arguments edited, a fork of the conversation), and the open Run only knows the history it parked with.
 *
 * The rule (docs/architecture.md, "Tool results"): the request must be
 *   [the parking request's messages] + [the assistant message(s) with the calls] + [their results]
 * where the first part has the parking request's history key (so it skips system messages, which clients such as
 * Claude Code rewrite on every request, and formatting noise) and the calls are exactly the ones the turn handed
 * out: same ids, names and arguments (canonical JSON, `""` = `{}`). The assistant text the client echoes is not
 * compared (clients drop or reformat it); one assistant message or several in a row (Responses items) both count.
 * Besides, the request must ask for the model the turn runs as, and declare every tool its Run offers. A request of
 * another owner (virtual key) never takes the turn at all: it is neither resumed nor closed by it.
 */
import { callsKey } from "../backend/history-fingerprint.js";
import type { HistoryMessage, HistoryToolCall } from "../backend/types.js";

/** What a parked turn remembers to recognise the request that may resume it. */
export interface ParkedOrigin {
  /** History key of the parking request's input (the key the engine remembers for the turn). */
  requestKey: string;
  /** {@link callsKey} of the calls the turn handed out in the segment that parked it. */
  callsKey: string;
  /** The model the turn runs as (ModelSelection.ranAs: the resolved id with its variant's parameters). */
  ranAs: string;
  /** The names of the tools its Run offers Cursor's model, one per line. */
  toolNames: string;
  /** Whose turn it is (EngineRequest.owner, a virtual key's id); undefined = the operator's. */
  owner?: string | undefined;
}

/** What a request that answers a parked turn's calls says about itself, in the same terms. */
export interface ResumeClaim {
  requestKey: string;
  callsKey: string;
  ranAs: string;
  toolNames: ReadonlySet<string>;
}

/** The key of a set of tool calls, shared with the conversation index's answer key. */
export { callsKey };

/**
 * The origin a request claims for its trailing tool results: the key of the messages before the assistant
 * message(s) that hold the answered calls, and those calls' key. Undefined when no assistant message precedes the
 * results. `keys`: the request's {@link historyKeyPrefixes} (element i covers `messages[0..i]`).
 */
export function claimedOrigin(
  messages: readonly HistoryMessage[],
  keys: readonly string[],
  ranAs: string,
  tools: readonly { name: string }[],
): ResumeClaim | undefined {
  let i = messages.length - 1;
  while (i >= 0 && messages[i]?.role === "tool") i--;
  const calls: HistoryToolCall[] = [];
  let start = i + 1;
  for (; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "assistant") break;
    calls.push(...message.toolCalls);
    start = i;
  }
  if (start === messages.length || messages[start]?.role !== "assistant" || start === 0) return undefined;
  const requestKey = keys[start - 1];
  if (requestKey === undefined) return undefined;
  return { requestKey, callsKey: callsKey(calls), ranAs, toolNames: new Set(tools.map((tool) => tool.name)) };
}

/** {@link ParkedOrigin.toolNames} of a tool list. */
export function toolNamesOf(tools: readonly { name: string }[]): string {
  return tools.map((tool) => tool.name).join("\n");
}

/** Why a request may not resume a parked turn; undefined when it may. */
export function originMismatch(parked: ParkedOrigin, claimed: ResumeClaim | undefined): string | undefined {
  if (claimed === undefined) return "no assistant message holds the answered calls";
  if (claimed.requestKey !== parked.requestKey) return "the history before the tool calls changed";
  if (claimed.callsKey !== parked.callsKey) return "the tool calls changed";
  // The open Run answers as the model it was opened for; the response would name another one.
  if (claimed.ranAs !== parked.ranAs) return `the model changed from ${parked.ranAs} to ${claimed.ranAs}`;
  // Cursor's model on the open Run may still call a tool the client no longer declares (a tool added since is only
  // missed until the next turn, which offers it).
  if (parked.toolNames !== "" && parked.toolNames.split("\n").some((name) => !claimed.toolNames.has(name))) {
    return "a tool the turn offered is no longer declared";
  }
  return undefined;
}
