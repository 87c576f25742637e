/**
 * Shared set-up of the agent-client integration tests: a port-0 emulator, a Cursor API client on the chosen
 * transport, a counting token source and an agent client over an in-memory (or given) conversation store.
 */
import { afterAll, beforeAll } from "vitest";
import { type AgentClientOptions, createAgentClient } from "../../src/backend/agent-client.js";
import type { AgentClient, BackendEvent, ClientTool, TokenSource, TurnRequest } from "../../src/backend/types.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { type CursorApi, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import type { ConversationStore } from "../../src/stores/types.js";

/**
 * A client tool taking one required string `q`, the shape `[[emu:tool NAME {"q":…}]]` calls use; a new object each
 * call (the agent client interns tool lists by identity, tool-list-cache.ts).
 */
export function queryTool(name = "lookup", description = "Looks something up."): ClientTool {
  return { name, description, inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } };
}

/** A recent client version the emulator accepts. */
export const CLIENT_VERSION = "cli-2026.01.17-d239e66";

/** Token source over the emulator's issuer that counts refreshes; `initialToken` can start it off with a bad token. */
export interface CountingTokenSource extends TokenSource {
  refreshes: number;
}

export function emulatorTokenSource(emulator: Emulator, initialToken?: string): CountingTokenSource {
  let token = initialToken ?? emulator.issueTokens().accessToken;
  const source: CountingTokenSource = {
    refreshes: 0,
    getAccessToken: async () => token,
    refreshAfterUnauthenticated: async () => {
      source.refreshes += 1;
      token = emulator.issueTokens().accessToken;
      return token;
    },
  };
  return source;
}

/** One test fixture. */
export interface Fixture {
  emulator: Emulator;
  api: CursorApi;
  client: AgentClient;
  store: ConversationStore;
  tokens: CountingTokenSource;
  close(): Promise<void>;
}

/** A fixture's parts without its `close` ({@link useFixture} closes it). */
export type FixtureParts = Omit<Fixture, "close">;

/** Options of {@link startFixture}. */
export interface FixtureOptions {
  transport: "http2" | "http1";
  client?: Partial<Omit<AgentClientOptions, "api" | "tokenSource">>;
  emulator?: Parameters<typeof startEmulator>[0];
  initialToken?: string;
  store?: ConversationStore;
}

export async function startFixture(options: FixtureOptions): Promise<Fixture> {
  const emulator = await startEmulator({ port: 0, heartbeatIntervalMs: 50, ...options.emulator });
  const tokens = emulatorTokenSource(emulator, options.initialToken);
  const api = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: tokens.getAccessToken,
    clientVersion: CLIENT_VERSION,
    transport: options.transport,
  });
  const store = options.store ?? createMemoryConversationStore();
  const client = createAgentClient({
    api,
    tokenSource: tokens,
    conversationStore: store,
    retry: { attempts: 2, baseDelayMs: 10 },
    environment: { osVersion: "linux 6.0.0", workspacePath: "/work/project", shell: "bash", timeZone: "UTC" },
    ...options.client,
  });
  return {
    emulator,
    api,
    client,
    store,
    tokens,
    async close() {
      api.close();
      await emulator.close();
    },
  };
}

/**
 * A fixture started in `beforeAll` and closed in `afterAll` of the enclosing `describe` (or file): its fields read the
 * started fixture, so they are read in a test or hook, not while the suite is being collected.
 */
export function useFixture(options: FixtureOptions): FixtureParts {
  let started: Fixture | undefined;
  beforeAll(async () => {
    started = await startFixture(options);
  });
  afterAll(async () => started?.close());
  const get = (): Fixture => {
    if (started === undefined)
      throw new Error("useFixture: the fixture starts in beforeAll; read it in a test or hook");
    return started;
  };
  return {
    get emulator() {
      return get().emulator;
    },
    get api() {
      return get().api;
    },
    get client() {
      return get().client;
    },
    get store() {
      return get().store;
    },
    get tokens() {
      return get().tokens;
    },
  };
}

/** Collects a segment's events. */
export async function collect(events: AsyncIterable<BackendEvent>): Promise<BackendEvent[]> {
  const out: BackendEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** Concatenated text deltas. */
export function textOf(events: readonly BackendEvent[]): string {
  return events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join("");
}

/** The tool-call events. */
export function toolCallsOf(events: readonly BackendEvent[]) {
  return events.flatMap((e) => (e.type === "tool-call" ? [e] : []));
}

/** The ids whose arguments were shown forming (`tool-call-delta`), in order of their first piece. */
export function formingIds(events: readonly BackendEvent[]): string[] {
  return [...new Set(events.flatMap((e) => (e.type === "tool-call-delta" ? [e.toolCallId] : [])))];
}

/** Every event a stream yields up to its end, and the error it failed with (undefined when it ended cleanly). */
export async function collectUntilFailure(
  events: AsyncIterable<BackendEvent>,
): Promise<{ seen: BackendEvent[]; failure: unknown }> {
  const seen: BackendEvent[] = [];
  try {
    for await (const event of events) seen.push(event);
    return { seen, failure: undefined };
  } catch (error) {
    return { seen, failure: error };
  }
}

/** The reason of the final turn-end event. */
export function endOf(events: readonly BackendEvent[]): string | undefined {
  const last = events.at(-1);
  return last?.type === "turn-end" ? last.reason : undefined;
}

/** A one-message turn request. */
export function userTurn(conversationId: string, text: string, extra: Partial<TurnRequest> = {}): TurnRequest {
  return {
    model: "auto",
    conversationId,
    messages: [
      { role: "system", content: "You are a test assistant." },
      { role: "user", content: text },
    ],
    tools: [],
    ...extra,
  };
}
