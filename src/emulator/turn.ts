/**
 * The turn protocol state machine (docs/protocol.md §4.4): run_request → fetch the state's blobs (`get_blob_args`)
 * → ask `request_context_args` → stream thinking/text/tool calls, with exec round trips → `set_blob_args` for the new
 * conversation pieces, each acked → `conversation_checkpoint_update` → `turn_ended` → end of stream.
 * Transport-neutral: agent-service.ts (HTTP/2 Run) and bidi.ts (RunSSE + BidiAppend) feed it.
 */
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AgentRunRequest, AgentServerMessage } from "../gen/agent/v1/agent_pb.js";
import { type ConversationStep, ConversationStepSchema } from "../gen/agent/v1/conversation_state_pb.js";
import type { TurnEndedUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import type { Logger } from "../util/logger.js";
import type { BlobCache } from "./blobs.js";
import { parseDirectives } from "./directives.js";
import { badModelName, badRequest, bareResourceExhausted, modelNotFound, scriptedError } from "./errors.js";
import { describeToolCall } from "./exec-results.js";
import { checkSelectedImages } from "./images.js";
import type { ModelCatalogue } from "./models.js";
import { sleep } from "./queue.js";
import type { UsageLedger } from "./rest.js";
import {
  composeReply,
  estimateTokens,
  planTurn,
  type RequestFacts,
  type TurnPlan,
  thinkingText,
} from "./scripted-model.js";
import { buildNextState, readConversation } from "./state.js";
import type { StatsRecorder, TurnStats } from "./stats.js";
import { ClientGone, type InboundMessage, TurnChannel } from "./turn-channel.js";
import { modeId, runModeSwitches } from "./turn-mode.js";
import { ConnectionDropped, countTokens, TokenOutput, TurnTruncated } from "./turn-output.js";
import { sendTask } from "./turn-task.js";
import { sendTodos } from "./turn-todos.js";
import { askRequestContext, declaredTools, runCalls } from "./turn-tools.js";
import { runWebCalls } from "./turn-web.js";

/** Emulator-wide settings and shared state a turn needs. */
export interface TurnDeps {
  bootstrapLatencyMs: number;
  tokensPerSecond: number;
  /** Send `tool_requests_listed.call_count` before a step's tool calls (EmulatorOptions.toolCallCount). */
  toolCallCount: boolean;
  heartbeatIntervalMs: number;
  cache: BlobCache;
  stats: StatsRecorder;
  logger: Logger;
  models: ModelCatalogue;
  /** Per-conversation sums of the turns' counts (`GET /v1/agents/{id}/usage`). */
  usage: UsageLedger;
  /** Whether this emulator has already answered one `[[emu:overflow once]]` with the overflow (once per process). */
  overflowOnce: { fired: boolean };
}

/** What the transport provides. */
export interface TurnTransport {
  httpVersion: "http2" | "http1";
  inbound: AsyncIterable<InboundMessage>;
  /** Aborts when the client goes away. */
  clientSignal: AbortSignal;
  clientVersion: string;
  /** The `x-cursor-agent-allowed-tools` header; null when absent (every tool allowed). */
  allowedTools?: string | null;
  /** The `x-cursor-agent-exclude-tools` header; null when absent (nothing excluded). */
  excludedTools?: string | null;
  /** Destroys the connection (`[[emu:drop N]]`). */
  drop(): void;
  /** The Run's id (TurnStats.runId). */
  runId?: string;
  /** The headers recorded with the run (TurnStats.headers). */
  recordedHeaders?: Record<string, string>;
}

const FIRST_MESSAGE_TIMEOUT_MS = 30_000;

type TurnEndedUpdateInit = MessageInitShape<typeof TurnEndedUpdateSchema>;

/** Runs one turn; yields the server messages; throws the Connect error that ends the stream, if any. */
export async function* runTurn(transport: TurnTransport, deps: TurnDeps): AsyncGenerator<AgentServerMessage> {
  const record = deps.stats.openTurn(transport.httpVersion, Date.now(), {
    runId: transport.runId ?? randomUUID(),
    headers: transport.recordedHeaders ?? {},
  });
  const channel = new TurnChannel({
    inbound: transport.inbound,
    clientSignal: transport.clientSignal,
    heartbeatIntervalMs: deps.heartbeatIntervalMs,
    firstMessageTimeoutMs: FIRST_MESSAGE_TIMEOUT_MS,
    logger: deps.logger,
    onInboundBytes: (size) => {
      record.requestBytes += size;
    },
  });
  const close = (outcome: string): void => deps.stats.closeTurn(record, outcome, Date.now());
  /** `[[emu:slow-cancel MS]]`: how long after a cancel_action the turn ends. */
  const cancel = { delayMs: 0 };
  void drive(channel, transport, deps, record, cancel).then(
    () => {
      close("completed");
      channel.outbox.close();
    },
    (error: unknown) => {
      if (channel.cancelled) {
        // §4.5 cancel_action: stop generating and end the turn cleanly (later under [[emu:slow-cancel MS]], unless
        // the client goes away first).
        const end = () => {
          channel.send({
            message: { case: "interactionUpdate", value: { message: { case: "turnEnded", value: {} } } },
          });
          close("cancelled");
          channel.outbox.close();
        };
        if (cancel.delayMs > 0) sleep(cancel.delayMs, transport.clientSignal).then(end, () => {});
        else end();
      } else if (error instanceof ConnectionDropped) {
        close("dropped");
        channel.outbox.close();
      } else if (error instanceof TurnTruncated) {
        close("truncated");
        channel.outbox.close();
      } else if (error instanceof ClientGone || transport.clientSignal.aborted) {
        close("client_closed");
        channel.outbox.close();
      } else {
        const connectError = ConnectError.from(error, Code.Internal);
        close(`error:${Code[connectError.code]}`);
        deps.logger.info("turn failed", { code: Code[connectError.code], message: connectError.rawMessage });
        channel.outbox.fail(connectError);
      }
    },
  );
  try {
    yield* channel.outbox;
  } finally {
    close("client_closed");
    channel.dispose();
  }
}

/**
 * The longest user message text a Run takes: Cursor refuses a single user message above about 1 MiB (somewhere
 * between 850 KB and 1.06 MB) with `invalid_argument`, whatever the max mode (cursor-protocol-addendum-3.md P14).
 * The emulator takes the top of that range, so it refuses nothing the service was seen to take.
 */
export const MAX_USER_MESSAGE_BYTES = 1024 * 1024;

/** Validates the run request (§4.5) and records what the turn is. */
function acceptRequest(request: AgentRunRequest, record: TurnStats, models: ModelCatalogue) {
  const action = request.action?.action;
  record.conversationId = request.conversationId ?? "";
  record.action =
    action?.case === "userMessageAction"
      ? "user_message"
      : action?.case === "resumeAction"
        ? "resume"
        : (action?.case ?? "none");
  const modelId = request.modelDetails?.modelId || request.requestedModel?.modelId || "";
  record.model = modelId;
  if (action?.case !== "userMessageAction" && action?.case !== "resumeAction") {
    throw badRequest(
      `Unsupported run_request action ${action?.case ?? "(none)"}: expected user_message_action or resume_action.`,
    );
  }
  const selection = models.select(request.modelDetails?.modelId, request.requestedModel);
  if (!selection.ok) {
    if (selection.kind === "not_found") throw modelNotFound(selection.message);
    if (selection.kind === "bad_model_name") throw badModelName(selection.message);
    throw badRequest(selection.message);
  }
  // Cursor refuses `custom_system_prompt` for ordinary accounts; the field is access-gated and replaces the whole
  // harness prompt where it is allowed (cursor-protocol-addendum-3.md S1). The emulator's account is an ordinary one.
  if ((request.customSystemPrompt ?? "") !== "") throw badRequest("unknown option '--system-prompt'");
  const model = selection.model;
  const userMessage = action.case === "userMessageAction" ? action.value.userMessage : undefined;
  const textBytes = Buffer.byteLength(userMessage?.text ?? "", "utf8");
  if (textBytes > MAX_USER_MESSAGE_BYTES) {
    throw badRequest(
      `The user message is too long (${textBytes} bytes; at most ${MAX_USER_MESSAGE_BYTES} bytes in one message).`,
    );
  }
  return { resume: action.case === "resumeAction", model, userMessage };
}

/** What `[[emu:echo-model]]` reports about the run_request and its headers. */
function requestFacts(
  request: AgentRunRequest,
  allowedTools: string | null,
  excludedTools: string | null,
): RequestFacts {
  const requested = request.requestedModel;
  return {
    modelId: requested?.modelId ?? "",
    params: (requested?.parameters ?? []).map((p) => ({ id: p.id, value: p.value })),
    maxMode: requested?.maxMode ?? false,
    modelDetails: request.modelDetails?.modelId,
    allowedTools,
    excludedTools,
  };
}

async function drive(
  channel: TurnChannel,
  transport: TurnTransport,
  deps: TurnDeps,
  record: TurnStats,
  cancel: { delayMs: number },
): Promise<void> {
  const request = await channel.runRequest;
  const { resume, model, userMessage } = acceptRequest(request, record, deps.models);
  const fetchBlobs = (ids: readonly Uint8Array[]): Promise<Uint8Array[]> =>
    Promise.all(
      ids.map(async (id) => {
        const cached = deps.cache.get(id);
        if (cached !== undefined) return cached;
        record.getBlobRequests++;
        const data = await channel.getBlob(id);
        deps.cache.put(id, data);
        return data;
      }),
    );
  const conversation = await readConversation(request.conversationState, fetchBlobs, describeToolCall);
  const context = await askRequestContext(channel);
  const tools = declaredTools(request, context);
  const lastUser = [...conversation.history].reverse().find((entry) => entry.role === "user");
  const newImages = checkSelectedImages(userMessage?.selectedContext?.selectedImages ?? []);
  if (newImages.length > 0 && !model.images) throw badRequest(`Model "${model.id}" does not accept image input.`);
  const plan = planTurn({
    userText: userMessage?.text ?? lastUser?.text ?? "",
    resume,
    history: conversation.history,
    declaredTools: [...tools.keys()],
    images: [...conversation.images, ...newImages],
    request: requestFacts(request, transport.allowedTools ?? null, transport.excludedTools ?? null),
  });
  cancel.delayMs = plan.cancelDelayMs ?? 0;
  if (deps.bootstrapLatencyMs > 0) await sleep(deps.bootstrapLatencyMs, channel.signal);
  if (plan.fault?.kind === "error") throw scriptedError(plan.fault.code, transport.clientVersion);
  if (plan.fault?.kind === "overflow" && (plan.fault.once !== true || !deps.overflowOnce.fired)) {
    if (plan.fault.once === true) deps.overflowOnce.fired = true;
    throw bareResourceExhausted();
  }
  // Auto's pick, named before any output to clients that asked for it (cursor-protocol-addendum-2.md §4).
  const served = deps.models.route(model);
  if (served !== model && request.clientSupportsRoutedModelUpdate === true) {
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "routedModel", value: { displayName: served.displayName } } },
      },
    });
  }

  const output = new TokenOutput(channel, {
    tokensPerSecond: plan.tokensPerSecond ?? deps.tokensPerSecond,
    fault: plan.fault,
    drop: transport.drop,
  });
  const steps: ConversationStep[] = [];
  if (plan.thinkingTokens > 0) steps.push(await think(channel, output, plan.thinkingTokens));
  if (plan.todos !== undefined) steps.push(sendTodos(channel, plan.todos));
  if (plan.task !== undefined) steps.push(sendTask(channel, plan.task));
  const modeLines = await runModeSwitches(channel, plan.modeSwitches, modeId(userMessage?.mode), steps);
  plan.textParts.push(...modeLines);
  const webLines = await runWebCalls(channel, plan.webCalls, steps, deps.stats);
  plan.textParts.push(...webLines);
  const outcomes = await runCalls(channel, plan, tools, output, steps, deps.toolCallCount);
  const reply = composeReply(plan, outcomes);
  await output.stream(reply, "text");
  await output.finish();
  steps.push(create(ConversationStepSchema, { message: { case: "assistantMessage", value: { text: reply } } }));

  const promptText = [
    ...conversation.history.map((entry) => entry.text),
    context?.cloudRule ?? "",
    userMessage?.text ?? "",
  ].join("\n");
  const next = buildNextState({
    received: request.conversationState,
    userMessage,
    steps,
    requestId: undefined,
    usedTokens: estimateTokens(promptText) + output.outputTokens,
    maxTokens: model.contextWindow,
  });
  // §4.4 steps 5-7: every new blob acked before the checkpoint (no ack: heartbeats only, the real failure mode).
  await Promise.all(
    next.blobs.map(async (blob) => {
      await channel.setBlob(blob.id, blob.data);
      deps.cache.put(blob.id, blob.data);
    }),
  );
  channel.send({ message: { case: "conversationCheckpointUpdate", value: next.state } });
  const usage = turnUsage(plan, output.outputTokens, userMessage?.text ?? lastUser?.text ?? "", conversation.history);
  deps.usage.add(request.conversationId ?? "", record.runId, {
    inputTokens: Number(usage.inputTokens),
    outputTokens: Number(usage.outputTokens),
    cacheReadTokens: Number(usage.cacheReadTokens),
    cacheWriteTokens: Number(usage.cacheWriteTokens),
    reasoningTokens: Number(usage.reasoningTokens),
  });
  channel.send({ message: { case: "interactionUpdate", value: { message: { case: "turnEnded", value: usage } } } });
}

/**
 * The deterministic counts `turn_ended` carries (cursor-protocol-addendum-2.md §3; the formulas are in
 * docs/emulator.md and `emulator --help`): U = tokens of the user message without its directives; cache write = U,
 * cache read = `[[emu:cached N]]` or the tokens of the conversation read from the state, input = U + cache read +
 * cache write (Cursor's input holds the cache reads and writes, cursor-protocol-addendum-3.md U6; U is uncached),
 * reasoning = the `[[emu:think N]]` tokens, output = every token_delta of the turn.
 */
function turnUsage(
  plan: TurnPlan,
  outputTokens: number,
  userText: string,
  history: readonly { text: string }[],
): TurnEndedUpdateInit {
  const user = BigInt(countTokens(parseDirectives(userText).text));
  const cacheRead = plan.cachedTokens ?? countTokens(history.map((entry) => entry.text).join("\n"));
  return {
    inputTokens: user + BigInt(cacheRead) + user,
    outputTokens: BigInt(outputTokens),
    cacheReadTokens: BigInt(cacheRead),
    cacheWriteTokens: user,
    reasoningTokens: BigInt(plan.thinkingTokens),
  };
}

/** Streams the reasoning tokens, then `thinking_completed`; returns the step to store. */
async function think(channel: TurnChannel, output: TokenOutput, tokens: number): Promise<ConversationStep> {
  const started = Date.now();
  const text = thinkingText(tokens);
  await output.stream(text, "thinking");
  const durationMs = Date.now() - started;
  channel.send({
    message: {
      case: "interactionUpdate",
      value: { message: { case: "thinkingCompleted", value: { thinkingDurationMs: durationMs } } },
    },
  });
  return create(ConversationStepSchema, { message: { case: "thinkingMessage", value: { text, durationMs } } });
}
