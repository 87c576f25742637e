/**
 * The tool side of a turn (docs/protocol.md §4.4 step 3, §5.1, §5.2): the request-context exec that declares the
 * client tools, and the tool-call round trips of a plan.
 */
import { randomInt, randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { AgentRunRequest } from "../gen/agent/v1/agent_pb.js";
import { type ConversationStep, ConversationStepSchema } from "../gen/agent/v1/conversation_state_pb.js";
import { type RequestContext, RequestContextArgsSchema } from "../gen/agent/v1/request_context_pb.js";
import { type DeclaredTool, type PreparedCall, prepareCall } from "./exec.js";
import { sleep } from "./queue.js";
import { type CallOutcome, estimateTokens, type PlannedCall, type TurnPlan } from "./scripted-model.js";
import type { TurnChannel } from "./turn-channel.js";
import { type TokenOutput, TurnTruncated } from "./turn-output.js";

/** §4.4 step 3: the client answers with its environment, rules and tool declarations. */
export async function askRequestContext(channel: TurnChannel): Promise<RequestContext | undefined> {
  const answer = await channel.exec(
    { case: "requestContextArgs", value: create(RequestContextArgsSchema) },
    "requestContextResult",
  );
  const reply = answer.reply;
  if (reply?.case !== "requestContextResult" || reply.value.result.case !== "success") return undefined;
  return reply.value.result.value.requestContext;
}

/** Client tools from the request context (§5.2) and from run_request.mcp_tools / the action's request context. */
export function declaredTools(
  request: AgentRunRequest,
  context: RequestContext | undefined,
): Map<string, DeclaredTool> {
  const action = request.action?.action;
  const actionContext =
    action?.case === "userMessageAction" || action?.case === "resumeAction" ? action.value.requestContext : undefined;
  const definitions = [
    ...(context?.tools ?? []),
    ...(request.mcpTools?.mcpTools ?? []),
    ...(actionContext?.tools ?? []),
  ];
  const tools = new Map<string, DeclaredTool>();
  for (const definition of definitions) {
    const tool = {
      name: definition.name,
      toolName: definition.toolName || definition.name,
      providerIdentifier: definition.providerIdentifier,
    };
    if (!tools.has(tool.toolName)) tools.set(tool.toolName, tool);
    if (!tools.has(tool.name)) tools.set(tool.name, tool);
  }
  return tools;
}

/**
 * Runs the plan's steps in order (`[[emu:then]]` separates them): each step's calls as {@link runStep} does, the next
 * step once every result of the one before arrived. Returns the outcomes of every step, in order.
 */
export async function runCalls(
  channel: TurnChannel,
  plan: TurnPlan,
  tools: Map<string, DeclaredTool>,
  output: TokenOutput,
  steps: ConversationStep[],
  announceCount = true,
): Promise<CallOutcome[]> {
  const outcomes: CallOutcome[] = [];
  for (const step of new Set(plan.calls.map((call) => call.step))) {
    const calls = plan.calls.filter((call) => call.step === step);
    outcomes.push(...(await runStep(channel, plan, calls, tools, output, steps, announceCount)));
  }
  return outcomes;
}

/**
 * Issues every call of one step before waiting for any answer, then reports each completion (§5.1, §5.2). With
 * `announceCount`, the step's calls are first announced by `tool_requests_listed.call_count` (addendum 2 §4);
 * `[[emu:tool-count N]]` announces N instead, `[[emu:tool-listed-after N]]` after the Nth call; `[[emu:tool-gap MS]]`
 * spaces the calls out; `[[emu:tool-args-id]]` gives calls their own `McpArgs.tool_call_id`.
 */
async function runStep(
  channel: TurnChannel,
  plan: TurnPlan,
  calls: readonly PlannedCall[],
  tools: Map<string, DeclaredTool>,
  output: TokenOutput,
  steps: ConversationStep[],
  announceCount: boolean,
): Promise<CallOutcome[]> {
  const prepared: PreparedCall[] = [];
  let clientIndex = 0;
  // The step's calls come from one model response: their model_call_ids share its id and count up (cursor-protocol.md
  // §4.6, the captured `<uuid>-<n>-<4 alnum>`; addendum 3 T1: the id groups the calls of one model call).
  const modelCall = randomUUID();
  for (const [index, planned] of calls.entries()) {
    const ids = {
      callId: `call_${randomInt(10_000_000, 100_000_000)}`,
      modelCallId: `${modelCall}-${index}-${randomSuffix()}`,
      argsToolCallId: planned.kind === "mcp" ? ownArgsId(plan, clientIndex + 1) : undefined,
    };
    try {
      prepared.push(prepareCall(planned, ids, planned.kind === "mcp" ? tools.get(planned.name) : undefined));
      if (planned.kind === "mcp") clientIndex++;
    } catch (error) {
      const name = planned.kind === "mcp" ? planned.name : planned.native;
      plan.textParts.push(
        `Directive error: arguments for ${name} do not fit: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  const announce = () =>
    channel.send({
      message: {
        case: "interactionUpdate",
        // `[[emu:tool-count N]]`: a count that is not the step's, as a server that counts calls the client never sees.
        value: { message: { case: "toolRequestsListed", value: { callCount: plan.toolCount ?? prepared.length } } },
      },
    });
  // After how many of the step's calls the count goes out: before the first (0), or with `[[emu:tool-listed-after N]]`
  // after the Nth (the last when the step makes fewer), as the wire reference does not fix the order.
  const announceAfter =
    announceCount && prepared.length > 0 ? Math.min(plan.toolListedAfter ?? 0, prepared.length) : undefined;
  if (announceAfter === 0) announce();
  const answers: ReturnType<TurnChannel["exec"]>[] = [];
  const issued: PreparedCall[] = [];
  let clientCalls = 0;
  for (const [index, call] of prepared.entries()) {
    // `[[emu:tool-gap MS]]`: the model takes a while before each later call of the step.
    if (index > 0 && plan.toolGapMs !== undefined && plan.toolGapMs > 0) await sleep(plan.toolGapMs, channel.signal);
    const { callId, modelCallId } = call;
    const client = call.args.case === "mcpArgs";
    // `[[emu:tool-cut N]]`: this call's arguments stop forming halfway, and nothing more of it ever comes.
    const cut = client && ++clientCalls === plan.toolCut;
    const argsText = cut ? firstHalf(call.argsText) : call.argsText;
    // args_text_delta is the whole text so far (cursor-protocol-addendum-3 T1): a client tool's arguments grow in
    // pieces. A native call streams none (T2: the captured CLI traffic's native partials carry only the call id, the
    // empty ToolCall case and the model call id), so it gets one partial without text.
    const size = client ? (plan.toolChunkSize ?? DEFAULT_TOOL_CHUNK) : undefined;
    for (const argsTextDelta of client ? snapshots(argsText, size) : [""]) {
      channel.send({
        message: {
          case: "interactionUpdate",
          value: {
            message: { case: "partialToolCall", value: { callId, modelCallId, toolCall: call.partial, argsTextDelta } },
          },
        },
      });
    }
    if (cut) {
      if (index + 1 === announceAfter) announce();
      continue;
    }
    output.count(estimateTokens(call.argsText));
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "toolCallStarted", value: { callId, modelCallId, toolCall: call.started } } },
      },
    });
    // `[[emu:truncate]]`: the stream ends right after the first call started, with the call open.
    if (plan.fault?.kind === "truncate") throw new TurnTruncated();
    const answer = channel.exec(call.args, call.expectedReply, plan.abortExecAfterMs);
    // Observed by Promise.all below; a failure while a later call still waits out its gap is not unhandled.
    answer.catch(() => undefined);
    answers.push(answer);
    issued.push(call);
    if (index + 1 === announceAfter) announce();
  }
  const settled = await Promise.all(answers);
  return issued.map((call, i) => {
    const answer = settled[i];
    const completed = call.complete(answer?.reply ?? { case: undefined });
    const text = answer?.thrown !== undefined ? `error: ${answer.thrown}` : completed.text;
    const { callId, modelCallId } = call;
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "toolCallCompleted", value: { callId, modelCallId, toolCall: completed.toolCall } } },
      },
    });
    steps.push(create(ConversationStepSchema, { message: { case: "toolCall", value: completed.toolCall } }));
    return { name: call.name, text };
  });
}

/** Characters a client tool's argument snapshot grows by, unless `[[emu:tool-chunks N]]` says otherwise. */
export const DEFAULT_TOOL_CHUNK = 16;

/** The cumulative snapshots of `text` growing by at most `size` code points (one snapshot without a size). */
export function snapshots(text: string, size: number | undefined): string[] {
  const codePoints = Array.from(text);
  if (size === undefined || codePoints.length <= size) return [text];
  const out: string[] = [];
  for (let end = size; end < codePoints.length + size; end += size) out.push(codePoints.slice(0, end).join(""));
  return out;
}

/** The first half of `text` (rounded up, in code points): where a cut call's arguments stop forming. */
function firstHalf(text: string): string {
  const codePoints = Array.from(text);
  return codePoints.slice(0, Math.ceil(codePoints.length / 2)).join("");
}

/**
 * `[[emu:tool-args-id]]`: the id the step's `n`th client tool call (from 1) carries in its `McpArgs`, when that is not
 * its envelopes' `call_id` (cursor-protocol-addendum-3 T5: MCP calls are keyed by the id inside `McpArgs`, which need
 * not equal the envelope's). Shaped as a model's own tool-use id, so it never equals a `call_` envelope id.
 */
function ownArgsId(plan: TurnPlan, n: number): string | undefined {
  const chosen = plan.toolArgsId;
  if (chosen === undefined || (chosen.call !== undefined && chosen.call !== n)) return undefined;
  return `toolu_${randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

function randomSuffix(): string {
  return Array.from({ length: 4 }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[randomInt(36)]).join("");
}
