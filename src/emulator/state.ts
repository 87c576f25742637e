/**
 * Conversation state as the server sees it (docs/protocol.md §4.11, §5.3): the emulator keeps no per-conversation
 * memory, it rebuilds the history from the received `ConversationStateStructure` — root prompt JSON blobs, then the
 * turn blobs with their user-message and step blobs — and at the end of a turn it writes the new pieces as blobs and
 * returns the next state.
 */

import { clone, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import * as z from "zod";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
  type ConversationStep,
  ConversationStepSchema,
  ConversationTokenDetailsSchema,
  ConversationTurnStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import { type UserMessage, UserMessageSchema } from "../gen/agent/v1/user_message_pb.js";
import { assertBlobId, blobIdOf } from "./blobs.js";
import { checkImageBytes, checkSelectedImages, type ReceivedImage } from "./images.js";
import type { HistoryEntry } from "./scripted-model.js";

/** Fetches blob data by id, in order (through the client's KV store or the cache). */
export type BlobFetcher = (ids: readonly Uint8Array[]) => Promise<Uint8Array[]>;

/** What the server read from a received state. */
export interface ReadConversation {
  history: HistoryEntry[];
  /** Text of the system messages among the root prompt blobs. */
  systemPrompts: string[];
  /** Images of earlier turns (root prompt image parts, then checkpointed user messages), checked against their bytes. */
  images: ReceivedImage[];
}

const partSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  toolName: z.string().optional(),
  result: z.unknown().optional(),
  output: z.unknown().optional(),
  image: z.string().optional(),
  mediaType: z.string().optional(),
  mimeType: z.string().optional(),
});
const promptMessageSchema = z.looseObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(z.unknown())]),
  name: z.string().optional(),
  toolName: z.string().optional(),
});

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  // AI SDK v5 tool outputs: {type:"text"|"json", value}.
  const wrapped = z.looseObject({ type: z.string(), value: z.unknown() }).safeParse(value);
  if (wrapped.success) return asText(wrapped.data.value);
  return JSON.stringify(value) ?? "";
}

/** Root prompt blob (`{"role":…,"content":…}`, §4.11, §5.3) → history entries. */
function promptEntries(data: Uint8Array, index: number, images: ReceivedImage[]): HistoryEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(data));
  } catch {
    throw invalid(`root_prompt_messages_json[${index}] is not a UTF-8 JSON prompt message`);
  }
  const parsed = promptMessageSchema.safeParse(json);
  if (!parsed.success) throw invalid(`root_prompt_messages_json[${index}] is not a {role, content} prompt message`);
  const { role, content } = parsed.data;
  const fallbackName = parsed.data.toolName ?? parsed.data.name ?? "tool";
  if (typeof content === "string") {
    return [role === "tool" ? { role: "tool-result", name: fallbackName, text: content } : { role, text: content }];
  }
  const entries: HistoryEntry[] = [];
  const texts: string[] = [];
  for (const raw of content) {
    const part = partSchema.safeParse(raw);
    if (!part.success) continue;
    if (part.data.type === "text" && part.data.text !== undefined) texts.push(part.data.text);
    if (part.data.type === "image") {
      // AI SDK image part: base64 `image` plus `mediaType` (v5) or `mimeType` (v4).
      const where = `root_prompt_messages_json[${index}] image part`;
      const bytes = Buffer.from(part.data.image ?? "", "base64");
      images.push(checkImageBytes(bytes, part.data.mediaType ?? part.data.mimeType ?? "", where));
    }
    if (part.data.type === "tool-result") {
      const text = asText(part.data.output ?? part.data.result ?? "");
      entries.push({ role: "tool-result", name: part.data.toolName ?? fallbackName, text });
    }
  }
  if (texts.length > 0 && role !== "tool") entries.unshift({ role, text: texts.join("") });
  // A tool message whose result is plain text parts (an EPH-style rebuild) is still that tool's result.
  if (texts.length > 0 && role === "tool" && entries.length === 0) {
    entries.push({ role: "tool-result", name: fallbackName, text: texts.join("") });
  }
  return entries;
}

/** The reply name and result text of a stored tool-call step. */
export type ToolCallDescriber = (toolCall: ToolCall) => { name: string; text: string } | undefined;

function stepEntries(step: ConversationStep, describe: ToolCallDescriber): HistoryEntry[] {
  const m = step.message;
  if (m.case === "assistantMessage") return [{ role: "assistant", text: m.value.text }];
  if (m.case === "toolCall") {
    const outcome = describe(m.value);
    return outcome === undefined ? [] : [{ role: "tool-result", ...outcome }];
  }
  return [];
}

function decode<T>(parse: () => T, what: string): T {
  try {
    return parse();
  } catch {
    throw invalid(`${what} is not a valid protobuf message`);
  }
}

function checkIds(ids: readonly Uint8Array[], where: string): void {
  for (const [i, id] of ids.entries()) assertBlobId(id, `${where}[${i}]`);
}

/**
 * Reads the history a state references, fetching every blob it names (and nothing else) in three batches: root
 * prompts and turns, then every turn's user message and steps.
 */
export async function readConversation(
  state: ConversationStateStructure | undefined,
  fetchBlobs: BlobFetcher,
  describe: ToolCallDescriber,
): Promise<ReadConversation> {
  const roots = state?.rootPromptMessagesJson ?? [];
  const turnIds = state?.turns ?? [];
  checkIds(roots, "root_prompt_messages_json");
  checkIds(turnIds, "turns");
  const [rootData, turnData] = await Promise.all([fetchBlobs(roots), fetchBlobs(turnIds)]);
  const images: ReceivedImage[] = [];
  const history = rootData.flatMap((data, i) => promptEntries(data, i, images));
  const systemPrompts = history.flatMap((e) => (e.role === "system" ? [e.text] : []));
  const turns = turnData.flatMap((data, i) => {
    const turn = decode(() => fromBinary(ConversationTurnStructureSchema, data), `turns[${i}]`).turn;
    if (turn.case !== "agentConversationTurn") return [];
    const { userMessage, steps } = turn.value;
    if (userMessage.length > 0) assertBlobId(userMessage, `turns[${i}].user_message`);
    checkIds(steps, `turns[${i}].steps`);
    return [{ index: i, userMessage: userMessage.length > 0 ? userMessage : undefined, steps }];
  });
  const childIds = turns.flatMap((t) => (t.userMessage === undefined ? t.steps : [t.userMessage, ...t.steps]));
  const childData = await fetchBlobs(childIds);
  let next = 0;
  for (const turn of turns) {
    if (turn.userMessage !== undefined) {
      const data = childData[next++] ?? new Uint8Array();
      const message = decode(() => fromBinary(UserMessageSchema, data), `turns[${turn.index}].user_message`);
      history.push({ role: "user", text: message.text });
      images.push(...checkSelectedImages(message.selectedContext?.selectedImages ?? []));
    }
    for (const [j] of turn.steps.entries()) {
      const data = childData[next++] ?? new Uint8Array();
      const step = decode(() => fromBinary(ConversationStepSchema, data), `turns[${turn.index}].steps[${j}]`);
      history.push(...stepEntries(step, describe));
    }
  }
  return { history, systemPrompts, images };
}

/** A blob the server stores in the client's KV store with `set_blob_args`. */
export interface NewBlob {
  id: Uint8Array;
  data: Uint8Array;
}

function blob(data: Uint8Array): NewBlob {
  return { id: blobIdOf(data), data };
}

/** Inputs of {@link buildNextState}. */
export interface TurnRecord {
  received: ConversationStateStructure | undefined;
  userMessage: UserMessage | undefined;
  steps: ConversationStep[];
  requestId: string | undefined;
  usedTokens: number;
  maxTokens: number;
}

/** The received state plus one new turn; every new piece is a blob (children before parents). */
export function buildNextState(record: TurnRecord): { state: ConversationStateStructure; blobs: NewBlob[] } {
  const blobs: NewBlob[] = [];
  const user = record.userMessage === undefined ? undefined : blob(toBinary(UserMessageSchema, record.userMessage));
  if (user !== undefined) blobs.push(user);
  const steps = record.steps.map((step) => blob(toBinary(ConversationStepSchema, step)));
  blobs.push(...steps);
  const turn = blob(
    toBinary(
      ConversationTurnStructureSchema,
      create(ConversationTurnStructureSchema, {
        turn: {
          case: "agentConversationTurn",
          value: {
            userMessage: user?.id ?? new Uint8Array(0),
            steps: steps.map((s) => s.id),
            ...(record.requestId === undefined ? {} : { requestId: record.requestId }),
          },
        },
      }),
    ),
  );
  blobs.push(turn);
  const state = record.received
    ? clone(ConversationStateStructureSchema, record.received)
    : create(ConversationStateStructureSchema);
  state.turns = [...state.turns, turn.id];
  state.tokenDetails = create(ConversationTokenDetailsSchema, {
    usedTokens: record.usedTokens,
    maxTokens: record.maxTokens,
  });
  return { state, blobs };
}
