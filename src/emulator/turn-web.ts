/**
 * The scripted model's Cursor-side web tools (cursor-protocol-addendum-2.md §7, `[[emu:web-search]]` /
 * `[[emu:web-fetch]]`): `tool_call_started`, then the `interaction_query` asking the client, then after its answer
 * `tool_call_completed` with deterministic offline results (approved) or the `rejected` result. Nothing is fetched:
 * the results are derived from the query or URL, on the reserved `.invalid` name that never resolves.
 */
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type ConversationStep, ConversationStepSchema } from "../gen/agent/v1/conversation_state_pb.js";
import type { InteractionResponse } from "../gen/agent/v1/interaction_query_pb.js";
import type { ToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import { badRequest } from "./errors.js";
import type { PlannedWebCall } from "./scripted-model.js";
import type { StatsRecorder } from "./stats.js";
import type { TurnChannel } from "./turn-channel.js";

type ToolCallInit = MessageInitShape<typeof ToolCallSchema>;

/** One offline search result. */
export interface EmulatedReference {
  title: string;
  url: string;
  chunk: string;
}

/** Lower-case words of the query joined by `-` (at most 60 characters; `query` when nothing is left). */
export function querySlug(query: string): string {
  const slug = query
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60)
    .replace(/-+$/, "");
  return slug === "" ? "query" : slug;
}

/** The 3 deterministic references of a search. */
export function searchReferences(query: string): EmulatedReference[] {
  const slug = querySlug(query);
  return [1, 2, 3].map((n) => ({
    title: `Result ${n} for ${query}`,
    url: `https://emulator.invalid/search/${slug}/${n}`,
    chunk: `Offline excerpt ${n} about ${query}, served by the cursor-bridge emulator.`,
  }));
}

/** The deterministic page of a fetch. */
export function fetchedMarkdown(url: string): string {
  return `# Offline copy of ${url}\n\nThe cursor-bridge emulator derived this page from its URL; nothing was fetched.`;
}

/** Runs the plan's web calls in order; returns the reply lines. */
export async function runWebCalls(
  channel: TurnChannel,
  calls: readonly PlannedWebCall[],
  steps: ConversationStep[],
  stats: StatsRecorder,
): Promise<string[]> {
  const lines: string[] = [];
  for (const [index, call] of calls.entries()) {
    const callId = `call_web_${index + 1}_${randomUUID().slice(0, 8)}`;
    const ids = { callId, modelCallId: `${randomUUID()}-${index}` };
    const toolCallId = `toolu_web_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
    const started: ToolCallInit =
      call.kind === "search"
        ? { tool: { case: "webSearchToolCall", value: { args: { searchTerm: call.query, toolCallId } } } }
        : { tool: { case: "webFetchToolCall", value: { args: { url: call.url, toolCallId } } } };
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "toolCallStarted", value: { ...ids, toolCall: started } } },
      },
    });
    const response = await channel.ask(
      call.kind === "search"
        ? { case: "webSearchRequestQuery", value: { args: { searchTerm: call.query, toolCallId } } }
        : { case: "webFetchRequestQuery", value: { args: { url: call.url, toolCallId } } },
    );
    const verdict = approvalOf(
      response,
      call.kind === "search" ? "webSearchRequestResponse" : "webFetchRequestResponse",
    );
    const { toolCall, line } = complete(call, toolCallId, verdict);
    if (verdict.approved) stats.countWeb(call.kind);
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "toolCallCompleted", value: { ...ids, toolCall } } },
      },
    });
    steps.push(create(ConversationStepSchema, { message: { case: "toolCall", value: toolCall } }));
    lines.push(line);
  }
  return lines;
}

type Verdict = { approved: true } | { approved: false; reason: string };

/** The client's approval; an answer of another kind is a protocol error. */
function approvalOf(
  response: InteractionResponse,
  expected: "webSearchRequestResponse" | "webFetchRequestResponse",
): Verdict {
  const result = response.result;
  if (result.case !== expected) {
    throw badRequest(`interaction_response ${response.id} is ${result.case ?? "empty"}, expected ${expected}.`);
  }
  const approval = (result.value as { result: { case: string | undefined; value?: { reason?: string } } }).result;
  if (approval.case === "approved") return { approved: true };
  return { approved: false, reason: approval.value?.reason || "no reason given" };
}

function complete(
  call: PlannedWebCall,
  toolCallId: string,
  verdict: Verdict,
): { toolCall: ToolCallInit; line: string } {
  if (call.kind === "search") {
    const args = { searchTerm: call.query, toolCallId };
    if (!verdict.approved) {
      return {
        toolCall: {
          tool: {
            case: "webSearchToolCall",
            value: { args, result: { result: { case: "rejected", value: { reason: verdict.reason } } } },
          },
        },
        line: `Web search "${call.query}" was rejected: ${verdict.reason}`,
      };
    }
    const references = searchReferences(call.query);
    return {
      toolCall: {
        tool: {
          case: "webSearchToolCall",
          value: { args, result: { result: { case: "success", value: { references } } } },
        },
      },
      line: `Web search "${call.query}": ${references.map((r) => `${r.title} (${r.url})`).join("; ")}`,
    };
  }
  const args = { url: call.url, toolCallId };
  if (!verdict.approved) {
    return {
      toolCall: {
        tool: {
          case: "webFetchToolCall",
          value: { args, result: { result: { case: "rejected", value: { reason: verdict.reason } } } },
        },
      },
      line: `Web fetch ${call.url} was rejected: ${verdict.reason}`,
    };
  }
  const markdown = fetchedMarkdown(call.url);
  return {
    toolCall: {
      tool: {
        case: "webFetchToolCall",
        value: { args, result: { result: { case: "success", value: { url: call.url, markdown } } } },
      },
    },
    line: `Fetched ${call.url}: ${markdown.split("\n")[0]}`,
  };
}
