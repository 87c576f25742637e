/**
 * ACP sessions as stored records: the conversation the engine continues (its neutral messages) and the session
 * updates a `session/load` replays. Kept in the engine's store for stored records (the file or Redis
 * {@link ResponseStore}, under an `acp-session:` id), so a session loads after a restart and on any instance.
 * `session/list` reads an index kept in the same store (one `acp-session-index` record of id, cwd, title and update
 * time per session), updated at every save and delete. Saves in one process are serialised; two processes saving
 * at the same instant can drop one's index entry, which that session's next save restores (the session itself is
 * never lost, and `session/load` by id still finds it).
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { JsonValue } from "../../backend/types.js";
import type { ConversationMessage, MessagePart } from "../../engine/index.js";
import type { ResponseStore } from "../../stores/types.js";

/** Cursor's agent modes as ACP session modes. */
export type AcpModeId = "agent" | "plan" | "ask";

/** One session as stored. */
export interface AcpSessionRecord {
  id: string;
  cwd: string;
  mode: AcpModeId;
  /** The model id or alias the session runs on. */
  model: string;
  /** Values of the other configuration options (config-options.ts), by option id. */
  config: Record<string, string | boolean>;
  /** The title the editor shows (from the first prompt, or `session/set_title`). */
  title?: string;
  /** The conversation so far (user and assistant messages), as the engine continues it. */
  messages: ConversationMessage[];
  /** `session/update` payloads (the `update` field) replayed by `session/load`, oldest first, bounded. */
  transcript: JsonValue[];
  updatedAt: number;
}

/** What `session/list` shows of a session. */
export interface AcpSessionSummary {
  id: string;
  cwd: string;
  title?: string;
  updatedAt: number;
}

/** Where sessions live. */
export interface AcpSessionStore {
  get(id: string): Promise<AcpSessionRecord | undefined>;
  put(record: AcpSessionRecord): Promise<void>;
  /** Removes a session; resolves to whether it existed. */
  delete(id: string): Promise<boolean>;
  /** Every indexed session, newest first (ties by id). */
  list(): Promise<AcpSessionSummary[]>;
}

/** Most sessions the index keeps (the oldest leave it first; the store's own bound and TTL apply to the sessions). */
export const MAX_INDEXED_SESSIONS = 1000;
const INDEX_ID = "acp-session-index";

/** Most replayed updates kept per session (older ones are dropped from the replay, never from the conversation). */
export const MAX_TRANSCRIPT_ENTRIES = 2000;

const PREFIX = "acp-session:";

type StoredPart = { type: "text"; text: string } | { type: "image"; mimeType: string; base64: string };

function partToJson(part: MessagePart): StoredPart {
  return part.type === "text"
    ? part
    : { type: "image", mimeType: part.mimeType, base64: Buffer.from(part.data).toString("base64") };
}

function partFromJson(part: StoredPart): MessagePart {
  return part.type === "text"
    ? { type: "text", text: part.text }
    : { type: "image", mimeType: part.mimeType, data: new Uint8Array(Buffer.from(part.base64, "base64")) };
}

function messageToJson(message: ConversationMessage): JsonValue {
  if (message.role === "user") return { role: "user", parts: message.parts.map(partToJson) };
  return JSON.parse(JSON.stringify(message)) as JsonValue;
}

function messageFromJson(value: JsonValue): ConversationMessage | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const role = value.role;
  if (role === "user" && Array.isArray(value.parts)) {
    return { role: "user", parts: (value.parts as unknown as StoredPart[]).map(partFromJson) };
  }
  if (role === "assistant" && typeof value.text === "string") {
    return { role: "assistant", text: value.text, reasoning: [], toolCalls: [] };
  }
  return undefined;
}

function isMode(value: unknown): value is AcpModeId {
  return value === "agent" || value === "plan" || value === "ask";
}

function configFromJson(value: JsonValue | undefined): Record<string, string | boolean> {
  const config: Record<string, string | boolean> = {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) return config;
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry === "string" || typeof entry === "boolean") config[key] = entry;
  }
  return config;
}

function summaryFromJson(value: JsonValue): AcpSessionSummary | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const { id, cwd, title, updatedAt } = value;
  if (typeof id !== "string" || typeof cwd !== "string" || typeof updatedAt !== "number") return undefined;
  return { id, cwd, updatedAt, ...(typeof title === "string" ? { title } : {}) };
}

/** Newest first, then by id, so pages are stable. */
export function compareSummaries(a: AcpSessionSummary, b: AcpSessionSummary): number {
  return b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Sessions stored beside the stored responses (file or Redis), under their own id prefix. */
export function acpSessionStoreOver(store: ResponseStore): AcpSessionStore {
  const readIndex = async (): Promise<AcpSessionSummary[]> => {
    const stored = await store.get(INDEX_ID);
    const sessions = stored?.response.sessions;
    if (!Array.isArray(sessions)) return [];
    return sessions.map(summaryFromJson).filter((s): s is AcpSessionSummary => s !== undefined);
  };
  let chain: Promise<unknown> = Promise.resolve();
  /** Read-modify-write of the index, one at a time in this process. */
  const updateIndex = (change: (sessions: AcpSessionSummary[]) => AcpSessionSummary[]): Promise<void> => {
    const next = chain.then(async () => {
      const sessions = change(await readIndex())
        .sort(compareSummaries)
        .slice(0, MAX_INDEXED_SESSIONS);
      await store.put({
        id: INDEX_ID,
        response: { sessions: sessions as unknown as JsonValue[] },
        input: [],
        storedAt: Date.now(),
      });
    });
    chain = next.catch(() => undefined);
    return next;
  };
  return {
    list: async () => {
      await chain;
      return (await readIndex()).sort(compareSummaries);
    },
    async delete(id) {
      const existed = await store.delete(PREFIX + id);
      await updateIndex((sessions) => sessions.filter((s) => s.id !== id));
      return existed;
    },
    async get(id) {
      const stored = await store.get(PREFIX + id);
      if (stored === undefined) return undefined;
      const { cwd, mode, model, transcript, updatedAt, config, title } = stored.response;
      if (typeof cwd !== "string" || !isMode(mode) || typeof model !== "string") return undefined;
      const messages = stored.input.map(messageFromJson).filter((m): m is ConversationMessage => m !== undefined);
      return {
        id,
        cwd,
        mode,
        model,
        config: configFromJson(config),
        ...(typeof title === "string" ? { title } : {}),
        messages,
        transcript: Array.isArray(transcript) ? transcript : [],
        updatedAt: typeof updatedAt === "number" ? updatedAt : stored.storedAt,
      };
    },
    async put(record) {
      const transcript = record.transcript.slice(-MAX_TRANSCRIPT_ENTRIES);
      await store.put({
        id: PREFIX + record.id,
        response: {
          cwd: record.cwd,
          mode: record.mode,
          model: record.model,
          config: record.config,
          ...(record.title === undefined ? {} : { title: record.title }),
          transcript,
          updatedAt: record.updatedAt,
        },
        input: record.messages.map(messageToJson),
        storedAt: record.updatedAt,
      });
      const summary: AcpSessionSummary = {
        id: record.id,
        cwd: record.cwd,
        updatedAt: record.updatedAt,
        ...(record.title === undefined ? {} : { title: record.title }),
      };
      await updateIndex((sessions) => [...sessions.filter((s) => s.id !== record.id), summary]);
    },
  };
}

/** Updates that describe the session's state rather than its history: `session/load` answers them afresh. */
const STATE_UPDATES = new Set([
  "session_info_update",
  "config_option_update",
  "usage_update",
  "available_commands_update",
]);

/** Keeps an update for `session/load`, merging consecutive text chunks of the same kind. */
export function rememberUpdate(record: AcpSessionRecord, update: SessionUpdate): void {
  if (STATE_UPDATES.has(update.sessionUpdate)) return;
  const last = record.transcript.at(-1) as
    | { sessionUpdate?: string; content?: { type?: string; text?: string } }
    | undefined;
  if (
    (update.sessionUpdate === "agent_message_chunk" || update.sessionUpdate === "agent_thought_chunk") &&
    update.content.type === "text" &&
    last?.sessionUpdate === update.sessionUpdate &&
    last.content?.type === "text"
  ) {
    last.content.text = `${last.content.text ?? ""}${update.content.text}`;
    return;
  }
  record.transcript.push(JSON.parse(JSON.stringify(update)) as JsonValue);
}
