/**
 * What each of Cursor's modes lets an ACP session do, and the mode switches Cursor's model asks for. Cursor is told
 * the mode with every prompt, but the bridge does not count on it: an exec the session's mode forbids is refused
 * here, with a typed rejection Cursor understands, before anything is asked, read or run.
 *
 * - Agent: everything, each change after the user's permission (executor.ts).
 * - Ask answers without changing anything: writes, deletes, terminal commands and MCP tools not annotated read-only
 *   are refused; reads, ls, grep and glob run as in Agent mode (a read outside the folder still asks).
 * - Plan researches and writes a plan before any change: writes and deletes are refused; a terminal command or an
 *   MCP tool asks the user as in Agent mode (planning may need `git log`, and only the user can tell such a command
 *   from one that changes something). The plan itself is Cursor's `create_plan` query, which writes no file here.
 *
 * A mode switch Cursor's model asks for (`switch_mode_request_query`, docs/protocol.md §4.9) is the user's to allow:
 * it goes to the editor as a `session/request_permission`, and only "Allow" switches the session's mode.
 */
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { ModeSwitchRequest, ModeSwitchVerdict, SurfaceExec } from "../../backend/types.js";
import { isMode, MODES } from "./config-options.js";
import type { AcpModeId } from "./session-store.js";

/** A mode's display name (`Plan`), or the id itself for a mode the agent does not have. */
export function modeName(mode: string): string {
  return MODES.find((m) => m.id === mode)?.name ?? mode;
}

/**
 * Why `mode` refuses `exec`, or undefined when the mode allows it; `readOnlyTool` says whether an MCP call's tool is
 * annotated read-only.
 */
export function modeRefusal(mode: AcpModeId, exec: SurfaceExec, readOnlyTool: boolean): string | undefined {
  if (mode === "agent") return undefined;
  const what = refusedAction(mode, exec, readOnlyTool);
  if (what === undefined) return undefined;
  const purpose = mode === "ask" ? "answers without changing anything" : "plans the change before making it";
  return (
    `The session is in ${modeName(mode)} mode, which ${purpose}: ${what} was refused without asking the user. ` +
    "The user can switch the session to Agent mode for it."
  );
}

function refusedAction(mode: "ask" | "plan", exec: SurfaceExec, readOnlyTool: boolean): string | undefined {
  switch (exec.kind) {
    case "write":
      return `writing ${exec.path}`;
    case "delete":
      return `deleting ${exec.path}`;
    case "shell":
      return mode === "ask" ? `running \`${exec.command}\`` : undefined;
    case "mcp":
      return mode === "ask" && !readOnlyTool
        ? `calling the MCP tool ${exec.toolName} (not annotated read-only)`
        : undefined;
    case "read":
    case "ls":
    case "grep":
    case "glob":
    case "fetch":
      return undefined;
  }
}

/** The permission question of a mode switch; the executor's `ask` puts it to the editor. */
export interface ModeQuestion {
  toolCallId: string;
  title: string;
  content: ToolCallContent[];
}

/** What deciding a mode switch needs from the session. */
export interface ModeSwitchSession {
  /** The mode the session's turn runs in now. */
  mode(): AcpModeId;
  /** Switches the session's mode: saved, and told to the editor (`current_mode_update`). */
  setMode(mode: AcpModeId): Promise<void>;
  emit(update: SessionUpdate): Promise<void>;
  /** Asks the user; "allowed", "rejected" or "cancelled". */
  ask(question: ModeQuestion, signal: AbortSignal): Promise<"allowed" | "rejected" | "cancelled">;
}

/**
 * Decides a mode switch Cursor's model asks for: an unknown mode is rejected and the current one approved without
 * asking; any other goes to the user as a `switch_mode` tool call with a permission request, and only the user's
 * allow switches the session. The tool call is closed before this resolves.
 */
export async function decideModeSwitch(
  session: ModeSwitchSession,
  request: ModeSwitchRequest & { toolCallId: string },
  signal: AbortSignal,
): Promise<ModeSwitchVerdict> {
  const target = request.targetModeId.trim().toLowerCase();
  if (!isMode(target)) {
    const known = MODES.map((m) => m.id).join(", ");
    return { approved: false, reason: `This session has no mode "${request.targetModeId}" (it has ${known}).` };
  }
  const from = session.mode();
  if (target === from) return { approved: true };
  const { toolCallId } = request;
  const title = `Switch from ${modeName(from)} to ${modeName(target)} mode`;
  const explanation = request.explanation.trim() === "" ? "Cursor gave no reason." : request.explanation.trim();
  const content: ToolCallContent[] = [text(explanation)];
  await session.emit({
    sessionUpdate: "tool_call",
    toolCallId,
    title,
    kind: "switch_mode",
    status: "pending",
    content,
    rawInput: { targetModeId: request.targetModeId, explanation: request.explanation },
  });
  let verdict: ModeSwitchVerdict;
  try {
    const permission = await session.ask({ toolCallId, title, content }, signal);
    if (permission === "allowed") {
      await session.setMode(target);
      verdict = { approved: true };
    } else {
      verdict = {
        approved: false,
        reason: `The user ${permission} switching from ${modeName(from)} to ${modeName(target)} mode.`,
      };
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    verdict = { approved: false, reason: `The mode switch could not be asked: ${why}` };
  }
  await session
    .emit({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: verdict.approved ? "completed" : "failed",
      content: [text(verdict.approved ? `Switched to ${modeName(target)} mode.` : `Rejected: ${verdict.reason}`)],
      rawOutput: verdict.approved ? { fromModeId: from, toModeId: target } : { rejected: verdict.reason },
    })
    .catch(() => undefined);
  return verdict;
}

function text(value: string): ToolCallContent {
  return { type: "content", content: { type: "text", text: value } };
}
