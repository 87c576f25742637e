/**
 * The ACP agent in-process for protocol tests: the emulator, the real protocol and agent client and engine, the
 * sessions in a memory store, and a scripted editor (the SDK's ClientApp) whose fs, terminal and permission answers
 * each test sets. Every `session/update` the agent sends is collected.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentApp,
  type ClientConnection,
  client,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createAgentClient } from "../../src/backend/agent-client.js";
import { planUsageOf } from "../../src/cli/usage.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { type BridgeEngine, createEngine } from "../../src/engine/index.js";
import { type CursorApi, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import type { ResponseStore } from "../../src/stores/types.js";
import { type AcpAuth, createAcpAgent } from "../../src/surfaces/acp/agent.js";
import { acpSessionStoreOver } from "../../src/surfaces/acp/session-store.js";
import { silentLogger } from "../../src/util/logger.js";

/** The upstream side: emulator, engine and the store the sessions live in. */
export interface AcpUpstream {
  emulator: Emulator;
  engine: BridgeEngine;
  api: CursorApi;
  responses: ResponseStore;
  close(): Promise<void>;
}

export async function startUpstream(options: { stallTimeoutMs?: number } = {}): Promise<AcpUpstream> {
  const emulator = await startEmulator({ port: 0, heartbeatIntervalMs: 200 });
  const token = emulator.issueTokens().accessToken;
  const tokenSource = { getAccessToken: async () => token, refreshAfterUnauthenticated: async () => token };
  const api: CursorApi = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: async () => token,
    clientVersion: "cli-2026.01.17-d239e66",
    transport: "http2",
    logger: silentLogger,
  });
  const agentClient = createAgentClient({
    api,
    tokenSource,
    conversationStore: createMemoryConversationStore(),
    logger: silentLogger,
    ...(options.stallTimeoutMs === undefined ? {} : { stallTimeoutMs: options.stallTimeoutMs }),
  });
  const engine = createEngine({ agentClient, logger: silentLogger });
  return {
    emulator,
    engine,
    api,
    responses: createMemoryResponseStore(),
    close: async () => {
      await engine.closeAll();
      api.close();
      await emulator.close();
    },
  };
}

/** A scripted editor's answers. */
export interface EditorScript {
  files: Map<string, string>;
  permission: "allow-once" | "allow-always" | "reject-once" | "cancelled";
  /** How long the user takes to answer a permission request. */
  permissionDelayMs: number;
  /** Commands run until `terminal/kill` when true. */
  terminalHangs: boolean;
  /** Output and exit code of every terminal command. */
  terminal: { output: string; exitCode: number };
  /** Calls the agent made, by method. */
  calls: Array<{ method: string; params: unknown }>;
  /** Answers that replace the scripted ones, by method (a malformed answer, one that never comes). */
  answers: Map<string, (params: unknown) => unknown>;
  updates: SessionNotification[];
}

/** A connected editor and agent. */
export interface Connected {
  connection: ClientConnection;
  script: EditorScript;
  agentApp: AgentApp;
  closeAgent(): Promise<void>;
}

const AUTH: AcpAuth = {
  methods: [{ id: "cursor-login", name: "Stored login" }],
  authenticate: async (id) => {
    if (id !== "cursor-login") throw new Error(`Unknown authentication method ${id}.`);
  },
};

/** A fresh agent (as a new process would be) on `upstream`, connected to a scripted editor. */
/** What a test may change of the agent it connects to. */
export interface AgentOptions {
  settleTimeoutMs?: number;
  /** The model new sessions start on (`acp --model`). @default "composer-1" */
  defaultModel?: string;
}

export function connectEditor(upstream: AcpUpstream, options: AgentOptions = {}): Connected {
  const acp = createAcpAgent({
    stack: async () => ({
      engine: upstream.engine,
      sessions: acpSessionStoreOver(upstream.responses),
      usage: async (signal) => planUsageOf(await upstream.api.getCurrentPeriodUsage(signal)),
    }),
    auth: AUTH,
    logger: silentLogger,
    version: "test",
    defaultModel: "composer-1",
    newSessionId: randomUUID,
    now: Date.now,
    ...options,
  });
  const script: EditorScript = {
    files: new Map(),
    permission: "allow-once",
    permissionDelayMs: 0,
    terminalHangs: false,
    terminal: { output: "", exitCode: 0 },
    calls: [],
    answers: new Map(),
    updates: [],
  };
  /** The test's own answer to `method`, when it set one (typed as the SDK expects: it may be malformed on purpose). */
  const replaced = <T>(method: string, params: unknown): T | undefined => {
    const answer = script.answers.get(method);
    return answer === undefined ? undefined : (answer(params) as T);
  };
  const log = (method: string, params: unknown) => script.calls.push({ method, params });
  let kill = () => {};
  const killed = new Promise<void>((resolve) => (kill = resolve));
  const editor = client({ name: "scripted-editor" })
    .onNotification("session/update", ({ params }) => {
      script.updates.push(params);
    })
    .onRequest("session/request_permission", async ({ params }): Promise<RequestPermissionResponse> => {
      log("session/request_permission", params);
      const own = replaced<RequestPermissionResponse>("session/request_permission", params);
      if (own !== undefined) return own;
      await new Promise((resolve) => setTimeout(resolve, script.permissionDelayMs));
      return script.permission === "cancelled"
        ? { outcome: { outcome: "cancelled" } }
        : { outcome: { outcome: "selected", optionId: script.permission } };
    })
    .onRequest("fs/read_text_file", ({ params }) => {
      log("fs/read_text_file", params);
      const own = replaced<{ content: string }>("fs/read_text_file", params);
      if (own !== undefined) return own;
      const content = script.files.get(params.path);
      if (content === undefined) throw new Error(`no such file ${params.path}`);
      return { content };
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      log("fs/write_text_file", params);
      const own = replaced<Record<string, never>>("fs/write_text_file", params);
      if (own !== undefined) return own;
      script.files.set(params.path, params.content);
      return {};
    })
    .onRequest("terminal/create", ({ params }) => {
      log("terminal/create", params);
      return replaced<{ terminalId: string }>("terminal/create", params) ?? { terminalId: "term-1" };
    })
    .onRequest("terminal/wait_for_exit", async ({ params }) => {
      const own = replaced<{ exitCode: number }>("terminal/wait_for_exit", params);
      if (own !== undefined) return own;
      if (script.terminalHangs) await killed;
      return script.terminalHangs ? { exitCode: null, signal: "SIGKILL" } : { exitCode: script.terminal.exitCode };
    })
    .onRequest(
      "terminal/output",
      ({ params }) =>
        replaced<{ output: string; truncated: boolean }>("terminal/output", params) ?? {
          output: script.terminal.output,
          truncated: false,
          exitStatus: { exitCode: script.terminal.exitCode },
        },
    )
    .onRequest("terminal/kill", ({ params }) => {
      log("terminal/kill", params);
      kill();
      return {};
    })
    .onRequest("terminal/release", ({ params }) => {
      log("terminal/release", params);
      return {};
    });
  const connection = editor.connect(acp.app);
  return { connection, script, agentApp: acp.app, closeAgent: acp.close };
}

/** A test file's in-process upstream and scratch folder; every editor it connects is closed after each test. */
export interface AcpFixture {
  readonly upstream: AcpUpstream;
  /** The scratch folder (removed after the file's tests). */
  readonly dir: string;
  /** An editor connected to the agent, closed after the current test. */
  connect(options?: AgentOptions): Connected;
}

/** Registers the file's hooks: the upstream and a scratch folder (`prepare` fills it) before all, cleanup after. */
export function useAcpFixture(prefix: string, prepare?: (dir: string) => void): AcpFixture {
  let upstream: AcpUpstream | undefined;
  let dir: string | undefined;
  const open: Connected[] = [];
  beforeAll(async () => {
    upstream = await startUpstream();
    dir = mkdtempSync(join(tmpdir(), prefix));
    prepare?.(dir);
  });
  afterEach(async () => {
    for (const c of open.splice(0)) {
      await c.closeAgent();
      c.connection.close();
    }
  });
  afterAll(async () => {
    await upstream?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the ACP fixture is used before its beforeAll ran");
    return value;
  };
  return {
    get upstream() {
      return started(upstream);
    },
    get dir() {
      return started(dir);
    },
    connect(options) {
      const connected = connectEditor(started(upstream), options);
      open.push(connected);
      return connected;
    },
  };
}
