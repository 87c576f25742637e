/**
 * The full-history-replay baseline ("full-history replay, a new Run per request, as chat-only bridges do"), as most
 * existing bridges work (docs/protocol.md §5.4 "failing pattern" fallback and
 * §4.11): every OpenAI request becomes a new `Run`; the earlier conversation is flattened into one prompt blob
 * referenced from `root_prompt_messages_json`; a request carrying tool results becomes a `resume_action` Run whose
 * state holds the current user message, the assistant's tool call and the results; the Run that asked for a tool is
 * abandoned as soon as the tool call arrives (the response to the client ends with `tool_calls`).
 * Built on the same raw driver as the overhead baseline, never on src/.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
} from "../src/gen/agent/v1/conversation_state_pb.js";
import type { McpToolDefinition } from "../src/gen/agent/v1/mcp_pb.js";
import { newConversationId } from "./bench-stack.js";
import { type DirectClient, type DirectTurnResult, RawBlobStore, runDirectTurn } from "./raw-driver.js";

/** Options of a replayed conversation. */
export interface ReplayOptions {
  model: string;
  tools: readonly McpToolDefinition[];
  systemPrompt: string;
}

/** A tool result the client produced. */
export interface ReplayToolResult {
  name: string;
  callId: string;
  args: unknown;
  result: string;
}

/** One conversation driven by full-history replay. */
export class ReplayConversation {
  private readonly transcript: string[] = [];
  private readonly conversationId = newConversationId();
  private pendingUser: string | undefined;
  /** Every Run this conversation opened. */
  readonly runs: DirectTurnResult[] = [];

  constructor(
    private readonly client: DirectClient,
    private readonly options: ReplayOptions,
  ) {}

  /** Sends a user message; returns the Run's result (its `toolCalls` when the model asked for tools). */
  async send(text: string): Promise<DirectTurnResult> {
    const blobs = new RawBlobStore();
    const roots = this.historyBlob(blobs);
    const result = await this.run(blobs, roots, text);
    if (result.abandoned) this.pendingUser = text;
    else this.record([`user: ${text}`, `assistant: ${result.text}`]);
    return result;
  }

  /** Sends the results of the tool calls the last Run asked for, as a new `resume_action` Run. */
  async sendToolResults(results: readonly ReplayToolResult[]): Promise<DirectTurnResult> {
    const user = this.pendingUser;
    if (user === undefined) throw new Error("no tool calls are pending");
    const blobs = new RawBlobStore();
    const roots = this.historyBlob(blobs);
    roots.push(blobs.putJson({ role: "user", content: [{ type: "text", text: user }] }));
    roots.push(
      blobs.putJson({
        role: "assistant",
        content: results.map((r) => ({ type: "tool-call", toolCallId: r.callId, toolName: r.name, args: r.args })),
      }),
    );
    for (const r of results) {
      roots.push(
        blobs.putJson({
          role: "tool",
          content: [{ type: "tool-result", toolCallId: r.callId, toolName: r.name, result: r.result }],
        }),
      );
    }
    const result = await this.run(blobs, roots, undefined);
    this.pendingUser = undefined;
    this.record([
      `user: ${user}`,
      ...results.map((r) => `assistant called ${r.name}(${JSON.stringify(r.args)}) → ${r.result}`),
      `assistant: ${result.text}`,
    ]);
    return result;
  }

  private historyBlob(blobs: RawBlobStore): Uint8Array[] {
    if (this.transcript.length === 0) return [];
    return [blobs.putJson({ role: "user", content: `Conversation so far:\n${this.transcript.join("\n")}` })];
  }

  private record(lines: string[]): void {
    this.transcript.push(...lines);
  }

  private async run(blobs: RawBlobStore, roots: Uint8Array[], userText: string | undefined): Promise<DirectTurnResult> {
    const state: ConversationStateStructure | undefined =
      roots.length === 0 ? undefined : create(ConversationStateStructureSchema, { rootPromptMessagesJson: roots });
    const result = await runDirectTurn(this.client, {
      state,
      userText,
      conversationId: this.conversationId,
      model: this.options.model,
      tools: this.options.tools,
      systemPrompt: this.options.systemPrompt,
      blobs,
      onToolCall: () => "abandon",
    });
    this.runs.push(result);
    return result;
  }
}

/**
 * The second baseline of the tool scenario, for bridges that already park turns: a tool call is answered on the open
 * Run (no new Run per tool result), but each new user message opens a Run whose state lists every earlier message as
 * its own root prompt blob (§4.11), instead of continuing from a Cursor checkpoint. The blob store lives as long as
 * the conversation, so the server can fetch any blob it has not seen.
 */
export class PerMessageBlobConversation {
  private readonly messages: unknown[] = [];
  private readonly conversationId = newConversationId();
  private readonly blobs = new RawBlobStore();
  /** Every Run this conversation opened. */
  readonly runs: DirectTurnResult[] = [];

  constructor(
    private readonly client: DirectClient,
    private readonly options: ReplayOptions,
  ) {}

  /** Sends a user message; tool calls are answered on the same Run with `answer(call)`. */
  async send(
    text: string,
    answer: (call: { name: string; callId: string }) => { args: unknown; result: string },
  ): Promise<DirectTurnResult> {
    const roots = this.messages.map((m) => this.blobs.putJson(m));
    const answered: ReplayToolResult[] = [];
    const result = await runDirectTurn(this.client, {
      state:
        roots.length === 0 ? undefined : create(ConversationStateStructureSchema, { rootPromptMessagesJson: roots }),
      userText: text,
      conversationId: this.conversationId,
      model: this.options.model,
      tools: this.options.tools,
      systemPrompt: this.options.systemPrompt,
      blobs: this.blobs,
      onToolCall: (call) => {
        const { args, result } = answer(call);
        answered.push({ ...call, args, result });
        return { result };
      },
    });
    this.runs.push(result);
    this.messages.push({ role: "user", content: [{ type: "text", text }] });
    if (answered.length > 0) {
      this.messages.push({
        role: "assistant",
        content: answered.map((r) => ({ type: "tool-call", toolCallId: r.callId, toolName: r.name, args: r.args })),
      });
      for (const r of answered)
        this.messages.push({
          role: "tool",
          content: [{ type: "tool-result", toolCallId: r.callId, toolName: r.name, result: r.result }],
        });
    }
    this.messages.push({ role: "assistant", content: [{ type: "text", text: result.text }] });
    return result;
  }
}
