/**
 * `cursor-bridge acp`: an Agent Client Protocol agent (the official SDK's AgentApp) on the same engine as every
 * other surface. One process serves many sessions; each session keeps its conversation and replayable updates in
 * the engine's store for stored records, so `session/load` works after a restart.
 */

import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import {
  type AgentApp,
  type AgentContext,
  type AuthMethod,
  agent,
  type ClientCapabilities,
  type McpServer,
  PROTOCOL_VERSION,
  type PromptResponse,
  RequestError,
  type SessionCapabilities,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { JsonValue, ModelInfo } from "../../backend/types.js";
import type { Engine, MessagePart } from "../../engine/index.js";
import { contextWindowFor } from "../../util/context-window.js";
import type { Logger } from "../../util/logger.js";
import type { PlanUsage } from "../kit/deps.js";
import {
  COMMANDS,
  describeUsage,
  type SlashCommand,
  SUMMARY_REQUEST,
  seededMessage,
  slashCommandOf,
} from "./commands.js";
import {
  applyConfigOption,
  buildConfigOptions,
  type ConfigValue,
  contextSizeOf,
  findModel,
  MODES,
  modelStateOf,
} from "./config-options.js";
import { toRequestError } from "./errors.js";
import { createSessionExecutor } from "./executor.js";
import { TOO_LARGE_METHOD } from "./line-limit.js";
import { listPage } from "./list.js";
import { type McpHub, openMcpHub } from "./mcp-hub.js";
import {
  checkPromptDepth,
  parseFork,
  parseSetModel,
  parseSetTitle,
  parseTooLarge,
  promptParts,
  titleOf,
} from "./parse.js";
import { type AcpSessionRecord, type AcpSessionStore, rememberUpdate } from "./session-store.js";
import { StreamedCalls } from "./streamed-calls.js";
import { createSubagentView } from "./subagents.js";
import { runPrompt } from "./turn.js";
import { ACP_ERROR_CODES, type SessionModelState, type TurnTokens } from "./wire.js";

/** The engine and the session store, built on first use (after `authenticate` when the login changed). */
export interface AcpStack {
  engine: Engine;
  sessions: AcpSessionStore;
  /** This billing cycle's plan usage (`/usage`); undefined when the upstream does not report it. */
  usage?(signal: AbortSignal): Promise<PlanUsage | undefined>;
}

/** Logins the editor may pick. */
export interface AcpAuth {
  methods: AuthMethod[];
  /** Runs the method's flow (stored login, browser, API key); throws a readable error when it fails. */
  authenticate(methodId: string): Promise<void>;
}

/** What the agent is built from. */
export interface AcpAgentDeps {
  stack(): Promise<AcpStack>;
  auth: AcpAuth;
  logger: Logger;
  version: string;
  /** The model a new session starts on. */
  defaultModel: string;
  newSessionId(): string;
  now(): number;
  /** How long a prompt's end waits for the editor to answer what its tool calls asked. @default 5000 */
  settleTimeoutMs?: number;
}

/** How long a turn's end (a cancel) waits for the editor's answers before closing its tool calls as failed. */
const SETTLE_TIMEOUT_MS = 5_000;

interface LiveSession {
  record: AcpSessionRecord;
  mcp: McpHub;
  alwaysAllowed: Set<string>;
  running: AbortController | undefined;
  /** What the editor has not been told yet about the session's MCP servers. */
  notice: string | undefined;
}

/** The agent app (`app.connect(ndJsonStream(...))` serves it) and the shutdown of its sessions' MCP servers. */
export interface AcpAgent {
  app: AgentApp;
  close(): Promise<void>;
}

/** Builds the agent. */
export function createAcpAgent(deps: AcpAgentDeps): AcpAgent {
  const live = new Map<string, LiveSession>();
  let capabilities: ClientCapabilities = {};
  const { logger } = deps;

  const stack = async () => {
    try {
      return await deps.stack();
    } catch (error) {
      const refused = toRequestError(error);
      // Not logged in: the error names the login methods (initialize lists them too) for the editor to offer.
      if (refused.code === ACP_ERROR_CODES.unauthenticated) {
        refused.data = { ...(refused.data as object), authMethods: deps.auth.methods.map((method) => method.id) };
      }
      throw refused;
    }
  };

  /**
   * The model a new session starts on, as the catalogue names it (an alias becomes its id); a `--model` Cursor does
   * not serve is refused naming the ones it does, rather than failing every prompt.
   */
  const defaultModelIn = (models: ModelInfo[]): string => {
    if (models.length === 0) return deps.defaultModel;
    const model = findModel(models, deps.defaultModel);
    if (model !== undefined) return model.id;
    const served = models.filter((m) => m.variant === undefined).map((m) => m.id);
    const named =
      served.length > 12
        ? `${served.slice(0, 12).join(", ")}… (all ${served.length} in data.models)`
        : served.join(", ");
    throw RequestError.invalidParams(
      { model: deps.defaultModel, models: served },
      `The agent was started with --model ${deps.defaultModel}, which Cursor does not serve; change --model in the ` +
        `editor's agent settings to one of: ${named}.`,
    );
  };

  const modes = (record: AcpSessionRecord): SessionModeState => ({ currentModeId: record.mode, availableModes: MODES });

  const configContext = async () => ({ models: await (await stack()).engine.listModels() });

  /**
   * A session's options as a response carries them: the config options, and the model choice again in ACP's older
   * `models` shape for editors that switch models with session/set_model.
   */
  const sessionOptions = async (
    record: AcpSessionRecord,
  ): Promise<{ configOptions: SessionConfigOption[]; models: SessionModelState }> => {
    const context = await configContext();
    return { configOptions: buildConfigOptions(record, context), models: modelStateOf(record, context) };
  };

  /** Sets one option, saves the session and confirms with `config_option_update` (and `current_mode_update`). */
  const setOption = async (client: AgentContext, session: LiveSession, id: string, value: ConfigValue) => {
    const context = await configContext();
    const mode = session.record.mode;
    applyConfigOption(session.record, id, value, context);
    await save(session.record);
    const emit = emitter(client, session);
    if (session.record.mode !== mode) {
      await emit({ sessionUpdate: "current_mode_update", currentModeId: session.record.mode });
    }
    const options = buildConfigOptions(session.record, context);
    await emit({ sessionUpdate: "config_option_update", configOptions: options });
    return options;
  };

  const save = async (record: AcpSessionRecord) => {
    record.updatedAt = deps.now();
    await (await stack()).sessions.put(record);
  };

  const emitter =
    (client: AgentContext, session: LiveSession) => async (update: SessionUpdate, replay?: SessionUpdate) => {
      rememberUpdate(session.record, replay ?? update);
      await client.notify("session/update", { sessionId: session.record.id, update });
    };

  const attach = async (record: AcpSessionRecord, servers: McpServer[]) => {
    const previous = live.get(record.id);
    previous?.running?.abort();
    await previous?.mcp.close();
    const mcp = await openMcpHub(servers, { cwd: record.cwd, version: deps.version, logger });
    // Told in the next prompt's stream (and in the response's _meta): a failed server leaves the others working.
    const notice =
      mcp.failures.length === 0
        ? undefined
        : mcp.failures.map((f) => `MCP server ${f.server} failed to start: ${f.error}`).join("\n");
    const session: LiveSession = { record, mcp, alwaysAllowed: new Set(), running: undefined, notice };
    live.set(record.id, session);
    return session;
  };

  const sessionOf = (id: string) => {
    const session = live.get(id);
    if (session === undefined) throw RequestError.sessionNotFound(id);
    return session;
  };

  const mcpMeta = (session: LiveSession) =>
    session.mcp.failures.length === 0
      ? {}
      : { _meta: { "cursor-bridge": { mcpFailures: session.mcp.failures as unknown as JsonValue } } };

  /** Stops a live session's prompt and its MCP servers and forgets it (the stored session stays). */
  const detach = async (id: string) => {
    const session = live.get(id);
    if (session === undefined) return false;
    live.delete(id);
    session.running?.abort();
    await session.mcp.close();
    return true;
  };

  const storedOrLive = async (id: string) => {
    const record = live.get(id)?.record ?? (await (await stack()).sessions.get(id));
    if (record === undefined) throw RequestError.sessionNotFound(id);
    return record;
  };

  /** Sends the slash commands once the response that made the session known has gone out. */
  const announceCommands = (client: AgentContext, sessionId: string) => {
    setTimeout(() => {
      client
        .notify("session/update", {
          sessionId,
          update: { sessionUpdate: "available_commands_update", availableCommands: COMMANDS },
        })
        .catch(() => undefined);
    }, 0);
  };

  /** `usage_update` after a prompt: the context used (the turn's input and output) against the model's window. */
  const reportUsage = async (
    session: LiveSession,
    emit: (u: SessionUpdate) => Promise<void>,
    response: PromptResponse,
  ) => {
    const tokens = (response._meta?.["cursor-bridge"] as { usage?: TurnTokens } | undefined)?.usage;
    if (tokens === undefined) return;
    const models = await (await stack()).engine.listModels().catch(() => []);
    const model = findModel(models, session.record.model)?.id ?? session.record.model;
    await emit({
      sessionUpdate: "usage_update",
      used: tokens.inputTokens + tokens.outputTokens,
      size: contextSizeOf(session.record, { models }) ?? contextWindowFor(model),
      _meta: { "cursor-bridge": { turn: tokens as unknown as JsonValue } },
    });
  };

  /** Runs a slash command; nothing of it goes to Cursor except `/compact`'s summary request. */
  const runCommand = async (
    client: AgentContext,
    session: LiveSession,
    command: SlashCommand,
    emit: (u: SessionUpdate) => Promise<void>,
    prompt: (record: AcpSessionRecord, parts: MessagePart[]) => Promise<PromptResponse>,
  ): Promise<PromptResponse> => {
    const say = (text: string) => emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    switch (command.name) {
      case "plan":
      case "ask":
      case "agent":
        await setOption(client, session, "mode", command.name);
        await say(`Mode: ${MODES.find((m) => m.id === command.name)?.name ?? command.name}.`);
        break;
      case "model": {
        if (command.argument === "") {
          await say(`Model: ${session.record.model}. Name one to switch: /model <id>.`);
          break;
        }
        await setOption(client, session, "model", command.argument);
        await say(`Model: ${session.record.model}.`);
        break;
      }
      case "usage": {
        const { usage } = await stack();
        await say(describeUsage(await usage?.(AbortSignal.timeout(15_000))));
        break;
      }
      case "compact": {
        if (session.record.messages.length === 0) {
          await say("Nothing to compact yet.");
          break;
        }
        // Cursor writes the summary on the current conversation (Ask mode), then the session continues in a new one.
        const draft: AcpSessionRecord = { ...session.record, mode: "ask" };
        const response = await prompt(draft, [{ type: "text", text: SUMMARY_REQUEST }]);
        const last = draft.messages.at(-1);
        const summary = last?.role === "assistant" ? last.text.trim() : "";
        if (response.stopReason !== "end_turn" || summary === "") {
          await say("\n\nThe conversation was not compacted (no summary came back).");
          return response;
        }
        session.record.messages = [
          { role: "user", parts: [{ type: "text", text: seededMessage(summary) }] },
          { role: "assistant", text: "I have the summary and continue from it.", reasoning: [], toolCalls: [] },
        ];
        await say("\n\nCompacted: the next prompt starts a new Cursor conversation from this summary.");
        return response;
      }
    }
    return { stopReason: "end_turn" };
  };

  const close = async () => {
    for (const session of live.values()) session.running?.abort();
    await Promise.allSettled([...live.values()].map((session) => session.mcp.close()));
    live.clear();
  };

  const app = agent({ name: "cursor-bridge" })
    .onRequest("initialize", ({ params }) => {
      capabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: false },
          // `fork` and `title` are ACP's unstable session/fork and session/set_title (handled with parsers of their own).
          sessionCapabilities: {
            list: {},
            resume: {},
            close: {},
            delete: {},
            fork: {},
            title: {},
          } as SessionCapabilities,
        },
        authMethods: deps.auth.methods,
        agentInfo: { name: "cursor-bridge", title: "Cursor (cursor-bridge)", version: deps.version },
      };
    })
    .onRequest(TOO_LARGE_METHOD, parseTooLarge, ({ params }) => {
      throw RequestError.invalidRequest(
        { limit: params.limit },
        `The message was over ${mebibytes(params.limit)} (the limit of one JSON-RPC message to this agent) and was not read.`,
      );
    })
    .onRequest("authenticate", async ({ params }) => {
      if (!deps.auth.methods.some((method) => method.id === params.methodId)) {
        const known = deps.auth.methods.map((method) => method.id).join(", ");
        throw RequestError.invalidParams(undefined, `Unknown authentication method; this agent offers ${known}.`);
      }
      try {
        await deps.auth.authenticate(params.methodId);
      } catch (error) {
        throw toRequestError(error);
      }
      return {};
    })
    .onRequest("session/new", async ({ params, client }) => {
      if (!isAbsolute(params.cwd)) throw RequestError.invalidParams(undefined, "cwd must be an absolute path.");
      if (!(await isDirectory(params.cwd))) {
        throw RequestError.invalidParams({ cwd: params.cwd }, `cwd ${params.cwd} is not a folder on this machine.`);
      }
      const context = await configContext();
      const record: AcpSessionRecord = {
        id: deps.newSessionId(),
        cwd: params.cwd,
        mode: "agent",
        model: defaultModelIn(context.models),
        config: {},
        messages: [],
        transcript: [],
        updatedAt: deps.now(),
      };
      const options = buildConfigOptions(record, context);
      await save(record);
      const session = await attach(record, params.mcpServers);
      announceCommands(client, record.id);
      return {
        sessionId: record.id,
        modes: modes(record),
        configOptions: options,
        models: modelStateOf(record, context),
        ...mcpMeta(session),
      };
    })
    .onRequest("session/load", async ({ params, client }) => {
      const record = await storedOrLive(params.sessionId);
      if (isAbsolute(params.cwd)) record.cwd = params.cwd;
      const session = await attach(record, params.mcpServers);
      for (const update of record.transcript) {
        await client.notify("session/update", { sessionId: record.id, update: update as unknown as SessionUpdate });
      }
      announceCommands(client, record.id);
      return { modes: modes(record), ...(await sessionOptions(record)), ...mcpMeta(session) };
    })
    .onRequest("session/resume", async ({ params, client }) => {
      const record = await storedOrLive(params.sessionId);
      if (isAbsolute(params.cwd)) record.cwd = params.cwd;
      const session = await attach(record, params.mcpServers ?? []);
      announceCommands(client, record.id);
      return { modes: modes(record), ...(await sessionOptions(record)), ...mcpMeta(session) };
    })
    .onRequest("session/fork", parseFork, async ({ params, client }) => {
      const source = await storedOrLive(params.sessionId);
      const record: AcpSessionRecord = {
        ...(JSON.parse(JSON.stringify({ ...source, messages: [] })) as AcpSessionRecord),
        id: deps.newSessionId(),
        cwd: isAbsolute(params.cwd) ? params.cwd : source.cwd,
        // The same messages: the engine continues the source's Cursor conversation from its last checkpoint.
        messages: [...source.messages],
        ...(source.title === undefined ? {} : { title: `${source.title} (fork)` }),
      };
      await save(record);
      const session = await attach(record, params.mcpServers ?? []);
      announceCommands(client, record.id);
      return {
        sessionId: record.id,
        modes: modes(record),
        ...(await sessionOptions(record)),
        ...mcpMeta(session),
      };
    })
    .onRequest("session/set_title", parseSetTitle, async ({ params, client }) => {
      const session = sessionOf(params.sessionId);
      session.record.title = params.title;
      await emitter(
        client,
        session,
      )({
        sessionUpdate: "session_info_update",
        title: params.title,
        updatedAt: new Date(deps.now()).toISOString(),
      });
      await save(session.record);
      return {};
    })
    .onRequest("session/list", async ({ params }) => {
      if (params.cwd != null && !isAbsolute(params.cwd)) {
        throw RequestError.invalidParams(undefined, "cwd must be an absolute path.");
      }
      const { sessions } = await stack();
      return listPage(sessions, { cwd: params.cwd ?? undefined, cursor: params.cursor ?? undefined });
    })
    .onRequest("session/close", async ({ params }) => {
      if (!(await detach(params.sessionId))) throw RequestError.sessionNotFound(params.sessionId);
      return {};
    })
    .onRequest("session/delete", async ({ params }) => {
      const wasLive = await detach(params.sessionId);
      const existed = await (await stack()).sessions.delete(params.sessionId);
      if (!wasLive && !existed) throw RequestError.sessionNotFound(params.sessionId);
      return {};
    })
    .onRequest("session/prompt", async ({ params, client }) => {
      checkPromptDepth(params);
      const session = sessionOf(params.sessionId);
      if (session.running !== undefined) {
        throw RequestError.invalidRequest(undefined, "A prompt is already running in this session.");
      }
      const command = slashCommandOf(params.prompt);
      const parts = command === undefined ? promptParts(params.prompt) : [];
      const { engine } = await stack();
      const controller = new AbortController();
      session.running = controller;
      const emit = emitter(client, session);
      const userChunks = session.record.transcript.length;
      for (const block of params.prompt) {
        rememberUpdate(session.record, { sessionUpdate: "user_message_chunk", content: block });
      }
      const messagesBefore = session.record.messages;
      const transcriptBefore = session.record.transcript.length;
      if (session.record.title === undefined && command === undefined) {
        const title = titleOf(params.prompt);
        if (title !== undefined) {
          session.record.title = title;
          await emit({ sessionUpdate: "session_info_update", title, updatedAt: new Date(deps.now()).toISOString() });
        }
      }
      if (session.notice !== undefined) {
        await emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${session.notice}\n` } });
        session.notice = undefined;
      }
      const streamedCalls = new StreamedCalls();
      /** The record the turn runs on: the session's, or `/compact`'s draft in Ask mode. */
      let turnRecord = session.record;
      const executor = createSessionExecutor({
        streamedCalls,
        id: session.record.id,
        cwd: session.record.cwd,
        client,
        capabilities,
        mcp: session.mcp,
        alwaysAllowed: session.alwaysAllowed,
        emit,
        cancelled: controller.signal,
        mode: () => turnRecord.mode,
        setMode: async (mode) => {
          // The session's record first (setOption confirms a change it sees), then /compact's draft, if it runs.
          await setOption(client, session, "mode", mode);
          turnRecord.mode = mode;
        },
      });
      const prompt = async (record: AcpSessionRecord, content: MessagePart[]) => {
        turnRecord = record;
        const onSubagent = createSubagentView(emit);
        const response = await runPrompt(
          engine,
          { record, tools: session.mcp.tools, executor, emit, onSubagent, streamedCalls },
          content,
          controller.signal,
        );
        await reportUsage(session, emit, response);
        return response;
      };
      try {
        if (command !== undefined) return await runCommand(client, session, command, emit, prompt);
        return await prompt(session.record, parts);
      } catch (error) {
        // A prompt that failed before the conversation took it (nothing of it reached the conversation) is not
        // replayed by session/load as if Cursor had read it. Only when nothing else was recorded since its blocks: a
        // turn that ran tools (a file written) and then failed without text appends no message, but its tool calls
        // stay in the transcript, and they must not be replayed without the prompt that asked for them.
        if (session.record.messages === messagesBefore && session.record.transcript.length === transcriptBefore) {
          session.record.transcript.splice(userChunks, params.prompt.length);
        }
        throw error;
      } finally {
        // Every tool call of the turn ends before its response (a cancelled one still waiting on the editor too).
        await executor.settle(deps.settleTimeoutMs ?? SETTLE_TIMEOUT_MS);
        session.running = undefined;
        await save(session.record).catch((error: unknown) => logger.warn("could not save the session", { error }));
      }
    })
    .onNotification("session/cancel", ({ params }) => {
      live.get(params.sessionId)?.running?.abort();
    })
    .onRequest("session/set_mode", async ({ params, client }) => {
      await setOption(client, sessionOf(params.sessionId), "mode", params.modeId);
      return {};
    })
    // ACP's older model switch (before models were a config option): the model option, under its own method.
    .onRequest("session/set_model", parseSetModel, async ({ params, client }) => {
      await setOption(client, sessionOf(params.sessionId), "model", params.modelId);
      return {};
    })
    .onRequest("session/set_config_option", async ({ params, client }) => {
      const session = sessionOf(params.sessionId);
      return { configOptions: await setOption(client, session, params.configId, params.value) };
    });
  return { app, close };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}
