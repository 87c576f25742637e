/**
 * Runs Cursor's execs for one ACP session, the way the issue asks for an agent the user invited into the editor:
 * reads through `fs/read_text_file` (unsaved buffers are seen), writes through `fs/write_text_file` after
 * `session/request_permission`, shell commands in the editor's terminal after permission, ls/grep/glob by the bridge
 * read-only inside `cwd`, MCP calls to the session's MCP servers after permission (a tool the server annotates
 * read-only needs none). Without the editor capability an exec is rejected (a typed rejection Cursor understands),
 * never run some other way; a refused permission is a rejected result. What the session's mode forbids (Ask, Plan)
 * is refused before anything is asked or run, and a mode switch Cursor asks for goes to the user (modes.ts).
 * Every exec is shown as a `tool_call` and settled with a `tool_call_update`.
 */
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type {
  AgentContext,
  ClientCapabilities,
  PermissionOptionKind,
  RequestPermissionResponse,
  SessionUpdate,
  ToolCallContent,
} from "@agentclientprotocol/sdk";
import type { SurfaceExec, SurfaceExecResult, SurfaceExecutor } from "../../backend/types.js";
import { isJsonObject } from "../../util/json-value.js";
import { globFiles, grepFiles, insideCwd, landingPath, listDirectory, OutsideCwdError } from "./local-search.js";
import type { McpHub } from "./mcp-hub.js";
import { decideModeSwitch, modeRefusal } from "./modes.js";
import type { AcpModeId } from "./session-store.js";
import type { StreamedCalls } from "./streamed-calls.js";
import { absolutePath, displayOf, type ToolDisplay } from "./tool-display.js";

/** Most terminal output kept for Cursor (the editor truncates from the start beyond it). */
const TERMINAL_OUTPUT_LIMIT = 256 * 1024;

/** What the executor needs from its session. */
export interface ExecutorSession {
  id: string;
  cwd: string;
  client: AgentContext;
  capabilities: ClientCapabilities;
  mcp: McpHub;
  /**
   * What the user allowed "always" in this session: `write`, one command's {@link commandScope}, a file
   * (`write:`/`read:` and its path) or one MCP server's tool (`mcp:` server, newline, tool).
   */
  alwaysAllowed: Set<string>;
  /** The calls already shown from their streamed arguments (streamed-calls.ts). */
  streamedCalls?: StreamedCalls;
  /**
   * Sends a `session/update` and keeps it for `session/load`, or keeps `replay` instead when given (what the
   * editor shows live that a replay cannot, such as a released terminal).
   */
  emit(update: SessionUpdate, replay?: SessionUpdate): Promise<void>;
  /** The prompt's `session/cancel`: every exec of the turn stops with it, even before the engine closes the Run. */
  cancelled?: AbortSignal;
  /** The mode the turn runs in now (it may change during the turn); an exec it forbids is refused (modes.ts). */
  mode(): AcpModeId;
  /** Switches the session's mode once the user allowed it: saved, and told to the editor. */
  setMode(mode: AcpModeId): Promise<void>;
}

/** A session's executor; {@link SessionExecutor.settle} closes its tool calls before the prompt is answered. */
export interface SessionExecutor extends SurfaceExecutor {
  /**
   * Waits (at most `timeoutMs`) for the tool calls still running to send their final update; one that is still
   * open then (an editor that never answers its permission request) is closed as failed, and its late update is
   * dropped. ACP wants every update of a turn before the `session/prompt` response.
   */
  settle(timeoutMs: number): Promise<void>;
}

type Permission = "allowed" | "rejected" | "cancelled";

/**
 * What one permission request is about. "Allow always" remembers `scope`: for a command, the command exactly as it
 * runs and the folder it runs in, so another command, or the same one elsewhere, still asks; for a write inside the
 * session's folder, every such write of the session; for a write or a read outside it, that one file; for an MCP call,
 * that tool of that server. `always` is how the option says that.
 */
interface PermissionSubject {
  toolCallId: string;
  scope: string;
  always: string;
  display: ToolDisplay;
  content: ToolCallContent[];
}

type PermissionOptions = Array<{ optionId: string; name: string; kind: PermissionOptionKind }>;

/** Allow or Reject, nothing remembered: a mode switch is asked each time (it changes what the agent may do). */
const ALLOW_OR_REJECT: PermissionOptions = [
  { optionId: "allow-once", name: "Allow", kind: "allow_once" },
  { optionId: "reject-once", name: "Reject", kind: "reject_once" },
];

function optionsFor(subject: PermissionSubject): PermissionOptions {
  return [
    { optionId: "allow-once", name: "Allow", kind: "allow_once" },
    { optionId: "allow-always", name: subject.always, kind: "allow_always" },
    { optionId: "reject-once", name: "Reject", kind: "reject_once" },
  ];
}

/**
 * A shell command as "allow always" remembers it: the command as it will run (only the whitespace around it dropped:
 * inside quotes, spacing is meaning) and the folder it runs in.
 */
export function commandScope(command: string, directory: string): string {
  return `shell:${directory}\n${command.trim()}`;
}

/**
 * Whether `path` (absolute) is inside the session's folder, symbolic links followed (local-search.ts); by the names
 * alone when the folder cannot be resolved on this machine (the editor's files may not all be local).
 */
async function isInside(cwd: string, path: string): Promise<boolean> {
  try {
    await insideCwd(cwd, path);
    return true;
  } catch (error) {
    if (error instanceof OutsideCwdError) return false;
    const rel = relative(resolve(cwd), resolve(cwd, path));
    return !rel.startsWith("..") && !isAbsolute(rel);
  }
}

/**
 * Where a path outside the session's folder lands once symbolic links are followed (the name itself when it cannot be
 * resolved here): what a permission names and what "always allow" remembers, so a link in the folder cannot pass for
 * a file inside it, and one moved to point elsewhere asks again.
 */
async function landing(path: string): Promise<string> {
  return landingPath(path).catch(() => path);
}

/** What a permission prompt says of an access outside the session's folder. */
function outsideNote(verb: "reads" | "writes", path: string, target: string, cwd: string): string {
  const where = `outside the session's folder ${cwd}`;
  return target === path
    ? `${verb === "reads" ? "Read" : "Write"} ${path}, ${where}`
    : `${path} is a link: this ${verb} ${target}, ${where}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The editor answered one of its methods with something ACP's schema does not allow. */
export class MalformedEditorAnswer extends Error {
  constructor(method: string, what: string) {
    super(`The editor's answer to ${method} was malformed (${what}); the tool did not run as asked.`);
    this.name = "MalformedEditorAnswer";
  }
}

/** `value` is a plain object whose `key` is a string, else a {@link MalformedEditorAnswer}. */
function stringField(method: string, value: unknown, key: string): string {
  if (!isJsonObject(value)) throw new MalformedEditorAnswer(method, "not an object");
  const field = value[key];
  if (typeof field !== "string") throw new MalformedEditorAnswer(method, `${key} is not a string`);
  return field;
}

/** `terminal/wait_for_exit`'s answer (or `terminal/output`'s `exitStatus`): a number or null, a string or null. */
function exitStatusOf(method: string, value: unknown): { exitCode: number | null; signal: string | null } {
  if (!isJsonObject(value)) throw new MalformedEditorAnswer(method, "the exit status is not an object");
  const { exitCode, signal } = value;
  if (exitCode != null && (typeof exitCode !== "number" || !Number.isInteger(exitCode))) {
    throw new MalformedEditorAnswer(method, "exitCode is not an integer or null");
  }
  if (signal != null && typeof signal !== "string") {
    throw new MalformedEditorAnswer(method, "signal is not a string or null");
  }
  return { exitCode: exitCode ?? null, signal: signal ?? null };
}

/** The executor of one session. */
export function createSessionExecutor(session: ExecutorSession): SessionExecutor {
  const { client, cwd } = session;
  const fs = session.capabilities.fs;
  /** The tool calls running, each with the promise of its end. */
  const open = new Map<string, Promise<unknown>>();
  /** Calls settle() closed: nothing more is sent about them. */
  const closed = new Set<string>();
  const emit = (update: SessionUpdate, replay?: SessionUpdate): Promise<void> =>
    "toolCallId" in update && closed.has(update.toolCallId) ? Promise.resolve() : session.emit(update, replay);
  /** The shell calls whose output the editor shows in a terminal. */
  const inTerminal = new Set<string>();

  const ask = async (
    subject: PermissionSubject,
    signal: AbortSignal,
    options: PermissionOptions = optionsFor(subject),
  ): Promise<Permission> => {
    if (session.alwaysAllowed.has(subject.scope)) return "allowed";
    const { title, kind, locations } = subject.display;
    const response: RequestPermissionResponse = await client.request(
      "session/request_permission",
      {
        sessionId: session.id,
        toolCall: { toolCallId: subject.toolCallId, title, kind, locations, content: subject.content },
        options,
      },
      { cancellationSignal: signal },
    );
    if (signal.aborted) return "cancelled";
    const outcome: unknown = isJsonObject(response) ? response.outcome : undefined;
    if (!isJsonObject(outcome))
      throw new MalformedEditorAnswer("session/request_permission", "outcome is not an object");
    if (outcome.outcome === "cancelled") return "cancelled";
    if (outcome.outcome !== "selected" || typeof outcome.optionId !== "string") {
      throw new MalformedEditorAnswer(
        "session/request_permission",
        "outcome is neither cancelled nor a selected option",
      );
    }
    const option = options.find((o) => o.optionId === outcome.optionId);
    if (option?.kind === "allow_always") session.alwaysAllowed.add(subject.scope);
    return option?.kind === "allow_once" || option?.kind === "allow_always" ? "allowed" : "rejected";
  };

  const readText = async (path: string, signal: AbortSignal): Promise<string> => {
    const read = await client.request(
      "fs/read_text_file",
      { sessionId: session.id, path },
      { cancellationSignal: signal },
    );
    return stringField("fs/read_text_file", read, "content");
  };

  /** The folder a shell exec runs in: its working directory, else the session's. */
  const directoryOf = (exec: Extract<SurfaceExec, { kind: "shell" }>): string =>
    exec.workingDirectory === "" ? cwd : absolutePath(cwd, exec.workingDirectory);

  const shell = async (
    exec: Extract<SurfaceExec, { kind: "shell" }>,
    directory: string,
    toolCallId: string,
    signal: AbortSignal,
  ): Promise<SurfaceExecResult> => {
    const terminal = await client.createTerminal(
      {
        sessionId: session.id,
        command: "/bin/sh",
        args: ["-c", exec.command],
        cwd: directory,
        outputByteLimit: TERMINAL_OUTPUT_LIMIT,
      },
      { cancellationSignal: signal },
    );
    try {
      // The SDK's handle takes `terminalId` as it came: a missing or numeric id is the editor's fault, said as such.
      if (typeof terminal.id !== "string" || terminal.id === "") {
        throw new MalformedEditorAnswer("terminal/create", "terminalId is not a string");
      }
      await emit({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "in_progress",
        content: [{ type: "terminal", terminalId: terminal.id }],
      });
      const onAbort = () => void terminal.kill().catch(() => undefined);
      signal.addEventListener("abort", onAbort, { once: true });
      const timer =
        exec.timeoutMs === undefined
          ? undefined
          : setTimeout(() => void terminal.kill().catch(() => undefined), exec.timeoutMs);
      let exit: { exitCode: number | null; signal: string | null };
      try {
        exit = exitStatusOf("terminal/wait_for_exit", await terminal.waitForExit());
      } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      }
      const output = stringField("terminal/output", await terminal.currentOutput(), "output");
      const exitCode = exit.exitCode ?? (exit.signal ? 128 : 0);
      const text = exit.signal ? `${output}\n(killed by ${exit.signal})` : output;
      // Shown in the terminal: a failure before this point (a malformed answer) is shown as text instead.
      inTerminal.add(toolCallId);
      return { kind: "output", content: text, isError: exitCode !== 0, exitCode };
    } finally {
      await terminal.release().catch(() => undefined);
    }
  };

  const runExec = async (
    exec: SurfaceExec,
    toolCallId: string,
    display: ToolDisplay,
    signal: AbortSignal,
  ): Promise<{ result: SurfaceExecResult; content?: ToolCallContent[] }> => {
    // Before anything is asked, read or run: what the session's mode forbids is refused as it stands.
    const readOnlyTool = exec.kind === "mcp" && session.mcp.info(exec.toolName)?.readOnly === true;
    const refusal = modeRefusal(session.mode(), exec, readOnlyTool);
    if (refusal !== undefined) return rejected(refusal);
    switch (exec.kind) {
      case "read": {
        if (fs?.readTextFile !== true) return rejected("The editor does not offer fs/read_text_file.");
        const path = absolutePath(cwd, exec.path);
        let source = path;
        if (!(await isInside(cwd, path))) {
          // Inside the folder the user opened, reads need no permission; a file anywhere else (keys, other projects)
          // is read only once the user allows it, and what is read is the file the user allowed.
          source = await landing(path);
          const permission = await ask(
            {
              toolCallId,
              scope: `read:${source}`,
              always: `Always allow reading ${source}`,
              display,
              content: [textContent(outsideNote("reads", path, source, cwd))],
            },
            signal,
          );
          if (permission !== "allowed") return rejected(`The user ${permission} reading ${source}.`);
        }
        const text = await readText(source, signal);
        return { result: { kind: "output", content: text, isError: false } };
      }
      case "write": {
        if (fs?.writeTextFile !== true) return rejected("The editor does not offer fs/write_text_file.");
        const path = absolutePath(cwd, exec.path);
        let oldText: string | null = null;
        // A new file is not read first (the editor would answer "not found"); an existing one is read through the
        // editor, so the diff is against its unsaved buffer.
        if (fs.readTextFile === true && (await exists(path))) oldText = await readText(path, signal).catch(() => null);
        const diff: ToolCallContent[] = [{ type: "diff", path, oldText, newText: exec.text }];
        await emit({ sessionUpdate: "tool_call_update", toolCallId, content: diff });
        const inside = await isInside(cwd, path);
        // Outside the folder, the file the user allows is the one written (a link is not followed again later).
        const target = inside ? path : await landing(path);
        const permission = await ask(
          inside
            ? { toolCallId, scope: "write", always: "Allow all writes in this session", display, content: diff }
            : {
                toolCallId,
                scope: `write:${target}`,
                always: `Always allow writes to ${target}`,
                display,
                content: [textContent(outsideNote("writes", path, target, cwd)), ...diff],
              },
          signal,
        );
        if (permission !== "allowed")
          return { ...rejected(`The user ${permission} the write of ${target}.`), content: diff };
        const written: unknown = await client.request(
          "fs/write_text_file",
          { sessionId: session.id, path: target, content: exec.text },
          { cancellationSignal: signal },
        );
        if (written != null && !isJsonObject(written))
          throw new MalformedEditorAnswer("fs/write_text_file", "not an object");
        return { result: { kind: "output", content: `Wrote ${target}`, isError: false }, content: diff };
      }
      case "shell": {
        if (session.capabilities.terminal !== true) return rejected("The editor does not offer terminals.");
        const directory = directoryOf(exec);
        // The folder is shown (and remembered) with the command: the same command means something else elsewhere.
        const elsewhere = directory === cwd ? "" : ` in ${directory}`;
        const shown = elsewhere === "" ? exec.command : `${exec.command}\n\n(runs in ${directory})`;
        const permission = await ask(
          {
            toolCallId,
            scope: commandScope(exec.command, directory),
            always: `Always allow \`${exec.command.trim()}\`${elsewhere}`,
            display,
            content: [textContent(shown)],
          },
          signal,
        );
        if (permission !== "allowed") return rejected(`The user ${permission} running \`${exec.command}\`.`);
        return { result: await shell(exec, directory, toolCallId, signal) };
      }
      case "ls":
        return output(await listDirectory(cwd, exec.path));
      case "grep":
        return output(await grepFiles(cwd, exec));
      case "glob":
        return output(await globFiles(cwd, exec.pattern, exec.path));
      case "mcp": {
        const tool = session.mcp.info(exec.toolName);
        if (tool === undefined) return rejected(`No MCP tool named ${exec.toolName} in this session.`);
        // An MCP tool may do anything (write files, call services): it runs once the user allows it, unless the
        // server annotates it read-only (`readOnlyHint: true`), which needs no permission, as reads inside cwd.
        if (!tool.readOnly) {
          const permission = await ask(
            {
              toolCallId,
              scope: `mcp:${tool.server}\n${tool.tool}`,
              always: `Always allow ${tool.tool} of MCP server ${tool.server} in this session`,
              display,
              content: [textContent(`Call ${tool.tool} of MCP server ${tool.server} with ${exec.arguments || "{}"}`)],
            },
            signal,
          );
          if (permission !== "allowed") {
            return rejected(`The user ${permission} calling ${tool.tool} of MCP server ${tool.server}.`);
          }
        }
        const result = await session.mcp.call(exec.toolName, exec.arguments, signal);
        return { result: { kind: "output", ...result } };
      }
      case "delete":
        return rejected("ACP has no file deletion; ask the user to delete the file.");
      case "fetch":
        return rejected("cursor-bridge does not fetch URLs for an ACP session.");
    }
  };

  return {
    workspacePath: cwd,
    onTodos(todos) {
      // ACP plans have no cancelled entries: a cancelled todo leaves the plan.
      const entries = todos
        .filter((todo) => todo.status !== "cancelled")
        .map((todo) => ({
          content: todo.content,
          priority: "medium" as const,
          status: todo.status as "pending" | "in_progress" | "completed",
        }));
      session.emit({ sessionUpdate: "plan", entries }).catch(() => undefined);
    },
    run(exec, signal) {
      const cancelled = session.cancelled;
      const both = cancelled === undefined ? signal : AbortSignal.any([signal, cancelled]);
      const running = runCall(exec, both);
      open.set(exec.toolCallId, running);
      return running.finally(() => open.delete(exec.toolCallId));
    },
    switchMode(request, signal) {
      const cancelled = session.cancelled;
      const both = cancelled === undefined ? signal : AbortSignal.any([signal, cancelled]);
      const toolCallId = request.toolCallId === "" ? `switch-mode-${randomUUID()}` : request.toolCallId;
      const deciding = decideModeSwitch(
        {
          mode: () => session.mode(),
          setMode: (mode) => session.setMode(mode),
          emit: (update) => emit(update),
          ask: ({ toolCallId: id, title, content }, askSignal) =>
            ask(
              {
                toolCallId: id,
                scope: "",
                always: "",
                display: { title, kind: "switch_mode", locations: [] },
                content,
              },
              askSignal,
              ALLOW_OR_REJECT,
            ),
        },
        { ...request, toolCallId },
        both,
      );
      open.set(toolCallId, deciding);
      return deciding.finally(() => open.delete(toolCallId));
    },
    async settle(timeoutMs) {
      if (open.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.allSettled([...open.values()]), late]);
      clearTimeout(timer);
      for (const toolCallId of [...open.keys()]) {
        closed.add(toolCallId);
        await session
          .emit({
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: "failed",
            content: [textContent("Cancelled: the editor had not answered when the turn ended.")],
            rawOutput: { rejected: "cancelled" },
          })
          .catch(() => undefined);
      }
    },
  };

  async function runCall(exec: SurfaceExec & { toolCallId: string }, signal: AbortSignal): Promise<SurfaceExecResult> {
    const { toolCallId } = exec;
    const display = displayOf(exec, cwd);
    const rawInput = exec.kind === "mcp" ? safeJson(exec.arguments) : { ...exec, toolCallId: undefined };
    // A call shown while its arguments streamed is updated with the final ones, not shown twice.
    const shown = session.streamedCalls?.take(toolCallId) === true;
    await emit({
      sessionUpdate: shown ? "tool_call_update" : "tool_call",
      toolCallId,
      status: "pending",
      rawInput,
      ...display,
    });
    let outcome: { result: SurfaceExecResult; content?: ToolCallContent[] };
    try {
      outcome = await runExec(exec, toolCallId, display, signal);
    } catch (error) {
      outcome =
        error instanceof OutsideCwdError
          ? rejected(error.message)
          : { result: { kind: "output", content: messageOf(error), isError: true } };
    }
    const { result } = outcome;
    const text = result.kind === "rejected" ? `Rejected: ${result.reason}` : result.content;
    const failed = result.kind === "rejected" || result.isError;
    const content: ToolCallContent[] = [...(outcome.content ?? []), textContent(text)];
    const final = {
      sessionUpdate: "tool_call_update" as const,
      toolCallId,
      status: failed ? ("failed" as const) : ("completed" as const),
      content,
      rawOutput:
        result.kind === "rejected"
          ? { rejected: result.reason }
          : { output: result.content, exitCode: result.exitCode },
    };
    // A command's output stays in the editor's terminal while the session is open; the terminal is released, so a
    // replay (session/load) shows the output as text instead.
    const { content: _, ...withoutContent } = final;
    const live = inTerminal.delete(toolCallId) ? withoutContent : final;
    await emit(live, final).catch(() => undefined);
    return result;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function rejected(reason: string): { result: SurfaceExecResult } {
  return { result: { kind: "rejected", reason } };
}

function output(text: string): { result: SurfaceExecResult } {
  return { result: { kind: "output", content: text, isError: false } };
}

function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
