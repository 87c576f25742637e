/**
 * The turn protocol over HTTP/2 `Run` (docs/protocol.md §4.4, §5.1, §5.2), driven by a raw connect-es client on
 * the generated schema: echo, client tool round trips, natives, thinking/tokens, usage, faults, waits and cancel.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { parseShellCommand } from "../../src/emulator/shell-parse.js";
import {
  ConversationStepSchema,
  ConversationTurnStructureSchema,
} from "../../src/gen/agent/v1/conversation_state_pb.js";
import type { ExecServerMessage } from "../../src/gen/agent/v1/exec_pb.js";
import { McpToolsSchema } from "../../src/gen/agent/v1/mcp_pb.js";
import { agentClient, BlobStore, driveRun, runRequest, toolDefinition, updateCases } from "./support/raw-client.js";
import { execMessages, mcpReply } from "./support/turn-helpers.js";

let emulator: Emulator;
let client: ReturnType<typeof agentClient>;

beforeAll(async () => {
  emulator = await startEmulator({ heartbeatIntervalMs: 20 });
  client = agentClient(emulator.url, emulator.issueTokens().accessToken);
});
afterAll(async () => {
  await emulator.close();
});

describe("echo", () => {
  it("streams `You said: <text>` as several text deltas, then checkpoint, turn_ended and a clean end", async () => {
    const result = await driveRun(client, runRequest("hello there, emulator [[emu:rate 10000]]"), new BlobStore());
    expect(result.error).toBeUndefined();
    expect(result.text).toBe("You said: hello there, emulator");
    const cases = updateCases(result);
    expect(cases.filter((c) => c === "textDelta").length).toBeGreaterThan(1);
    expect(cases.at(-1)).toBe("turnEnded");
    const kinds = result.messages.map((m) => m.message.case);
    expect(kinds.indexOf("conversationCheckpointUpdate")).toBeLessThan(kinds.lastIndexOf("interactionUpdate"));
  });

  it("asks request_context_args before any output and the checkpoint's bytes fields are blob ids it set", async () => {
    const store = new BlobStore();
    const result = await driveRun(client, runRequest("check the state"), store);
    const firstExec = execMessages(result.messages)[0];
    expect(firstExec?.message.case).toBe("requestContextArgs");
    const checkpoint = result.checkpoint;
    expect(checkpoint?.turns).toHaveLength(1);
    const turnId = checkpoint?.turns[0] ?? new Uint8Array();
    expect(turnId).toHaveLength(32);
    const turn = fromBinary(ConversationTurnStructureSchema, store.get(turnId) ?? new Uint8Array());
    expect(turn.turn.case).toBe("agentConversationTurn");
    if (turn.turn.case !== "agentConversationTurn") return;
    expect(store.get(turn.turn.value.userMessage)).toBeDefined();
    const step = fromBinary(
      ConversationStepSchema,
      store.get(turn.turn.value.steps.at(-1) ?? new Uint8Array()) ?? new Uint8Array(),
    );
    expect(step.message.case === "assistantMessage" && step.message.value.text).toBe("You said: check the state");
  });

  it("reports usage that adds up: Σ token_delta = output tokens, used_tokens = prompt estimate + output", async () => {
    const result = await driveRun(client, runRequest("[[emu:tokens 50]]"), new BlobStore());
    expect(result.text.split(" ")).toHaveLength(50);
    expect(result.tokens).toBe(50);
    const details = result.checkpoint?.tokenDetails;
    expect(details?.maxTokens).toBe(200_000);
    expect(details?.usedTokens).toBe(result.tokens + Math.ceil("[[emu:tokens 50]]".length / 4) + 0);
  });
});

describe("client tools", () => {
  const tools = [toolDefinition("lookup"), toolDefinition("weather")];

  it("one round trip on one Run: partial → started → mcp_args → result → completed → reply", async () => {
    const seen: ExecServerMessage[] = [];
    const result = await driveRun(client, runRequest('[[emu:tool lookup {"q":"cats","n":2}]]'), new BlobStore(), {
      tools,
      onExec: (exec) => {
        seen.push(exec);
        return mcpReply(exec, "42 cats");
      },
    });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe("lookup returned: 42 cats");
    const cases = updateCases(result).filter((c) => c !== "tokenDelta" && c !== "textDelta");
    // The arguments stream as cumulative snapshots growing by at most 16 characters (addendum 3 T1).
    expect(cases.filter((c) => c === "partialToolCall")).toHaveLength(2);
    const snapshots = result.messages.flatMap((m) =>
      m.message.case === "interactionUpdate" && m.message.value.message.case === "partialToolCall"
        ? [m.message.value.message.value.argsTextDelta]
        : [],
    );
    expect(snapshots).toEqual(['{"q":"cats","n":', '{"q":"cats","n":2}']);
    expect(cases.filter((c, i) => c !== "partialToolCall" || cases[i - 1] !== "partialToolCall")).toEqual([
      "toolRequestsListed",
      "partialToolCall",
      "toolCallStarted",
      "toolCallCompleted",
      "turnEnded",
    ]);
    const exec = seen[0];
    expect(exec?.message.case).toBe("mcpArgs");
    if (exec?.message.case !== "mcpArgs") return;
    const args = exec.message.value;
    expect(args.toolName).toBe("lookup");
    expect(args.providerIdentifier).toBe("test");
    expect(args.toolCallId).toMatch(/^call_\d{8}$/);
    const q = fromBinary(ValueSchema, args.args.q ?? new Uint8Array());
    expect(q.kind).toEqual({ case: "stringValue", value: "cats" });
    const started = result.messages.find(
      (m) => m.message.case === "interactionUpdate" && m.message.value.message.case === "toolCallStarted",
    );
    const update = started?.message.case === "interactionUpdate" ? started.message.value.message : undefined;
    expect(update?.case === "toolCallStarted" && update.value.callId).toBe(args.toolCallId);
    expect(update?.case === "toolCallStarted" && update.value.toolCall?.tool.case).toBe("mcpToolCall");
  });

  it("the calls of one step share their model call's id in model_call_id, numbered from 0 (§4.6)", async () => {
    const result = await driveRun(
      client,
      runRequest('[[emu:tool lookup {"q":"a"}]] [[emu:tool weather {"q":"b"}]]'),
      new BlobStore(),
      { tools, onExec: (exec) => mcpReply(exec, "ok") },
    );
    expect(result.error).toBeUndefined();
    const modelCallIds = new Set(
      result.messages.flatMap((m) =>
        m.message.case === "interactionUpdate" && m.message.value.message.case === "toolCallStarted"
          ? [m.message.value.message.value.modelCallId]
          : [],
      ),
    );
    const parts = [...modelCallIds].map((id) => /^([0-9a-f-]{36})-(\d+)-[a-z0-9]{4}$/.exec(id));
    expect(parts.map((p) => p?.[2])).toEqual(["0", "1"]);
    expect(new Set(parts.map((p) => p?.[1])).size).toBe(1);
  });

  it("[[emu:tool-args-id N]] gives the Nth call's McpArgs its own tool_call_id in every message of it (T5)", async () => {
    const seen: ExecServerMessage[] = [];
    const result = await driveRun(
      client,
      runRequest('[[emu:tool lookup {"q":"a"}]] [[emu:tool weather {"q":"b"}]] [[emu:tool-args-id 2]]'),
      new BlobStore(),
      {
        tools,
        onExec: (exec) => {
          seen.push(exec);
          return mcpReply(exec, "ok");
        },
      },
    );
    expect(result.error).toBeUndefined();
    expect(result.text).toBe("lookup returned: ok\nweather returned: ok");
    const argsIds = seen.flatMap((exec) => (exec.message.case === "mcpArgs" ? [exec.message.value.toolCallId] : []));
    // Each envelope's call_id with the tool_call_id of the McpArgs it carries.
    const pairs = new Set<string>();
    for (const m of result.messages) {
      if (m.message.case !== "interactionUpdate") continue;
      const u = m.message.value.message;
      if (u.case !== "partialToolCall" && u.case !== "toolCallStarted" && u.case !== "toolCallCompleted") continue;
      const tool = u.value.toolCall?.tool;
      if (tool?.case === "mcpToolCall") pairs.add(`${u.value.callId} ${tool.value.args?.toolCallId}`);
    }
    const [first, second] = argsIds;
    expect(first).toMatch(/^call_\d{8}$/);
    expect(second).toMatch(/^toolu_[0-9a-f]{24}$/);
    // One envelope id per call; the first call's McpArgs carries it, the second call's its own id.
    expect([...pairs]).toHaveLength(2);
    expect(pairs.has(`${first} ${first}`)).toBe(true);
    const secondPair = [...pairs].find((pair) => pair.endsWith(` ${second}`));
    expect(secondPair).toMatch(/^call_\d{8} toolu_/);
  });

  it("[[emu:tool-args-id]] gives every client call its own tool_call_id", async () => {
    const seen: string[] = [];
    const result = await driveRun(
      client,
      runRequest("[[emu:tool lookup {}]] [[emu:tool lookup {}]] [[emu:tool-args-id]]"),
      new BlobStore(),
      {
        tools,
        onExec: (exec) => {
          if (exec.message.case === "mcpArgs") seen.push(exec.message.value.toolCallId);
          return mcpReply(exec, "ok");
        },
      },
    );
    expect(result.error).toBeUndefined();
    expect(seen).toHaveLength(2);
    for (const id of seen) expect(id).toMatch(/^toolu_[0-9a-f]{24}$/);
    expect(new Set(seen).size).toBe(2);
  });

  it("announces a step's parallel calls with tool_requests_listed.call_count before the first of them", async () => {
    const result = await driveRun(
      client,
      runRequest("[[emu:tool lookup {}]] [[emu:tool weather {}]]"),
      new BlobStore(),
      { tools, onExec: (exec) => mcpReply(exec, "ok") },
    );
    expect(result.error).toBeUndefined();
    const updates = result.messages.flatMap((m) => (m.message.case === "interactionUpdate" ? [m.message.value] : []));
    const listed = updates.findIndex((u) => u.message.case === "toolRequestsListed");
    const firstPartial = updates.findIndex((u) => u.message.case === "partialToolCall");
    expect(listed).toBeGreaterThanOrEqual(0);
    expect(listed).toBeLessThan(firstPartial);
    const update = updates[listed]?.message;
    expect(update?.case === "toolRequestsListed" && update.value.callCount).toBe(2);
    expect(updates.filter((u) => u.message.case === "toolRequestsListed")).toHaveLength(1);
  });

  it("leaves tool_requests_listed out with toolCallCount: false", async () => {
    const quiet = await startEmulator({ heartbeatIntervalMs: 20, toolCallCount: false });
    try {
      const result = await driveRun(
        agentClient(quiet.url, quiet.issueTokens().accessToken),
        runRequest("[[emu:tool lookup {}]] [[emu:tool weather {}]]"),
        new BlobStore(),
        { tools, onExec: (exec) => mcpReply(exec, "ok") },
      );
      expect(result.error).toBeUndefined();
      expect(result.text).toBe("lookup returned: ok\nweather returned: ok");
      expect(updateCases(result)).not.toContain("toolRequestsListed");
    } finally {
      await quiet.close();
    }
  });

  it("parallel directives issue every exec before waiting for any reply", async () => {
    const pending: ExecServerMessage[] = [];
    const result = await driveRun(
      client,
      runRequest("[[emu:tool lookup {}]] [[emu:tool weather {}]]"),
      new BlobStore(),
      {
        tools,
        onExec: (exec) => {
          pending.push(exec);
          return undefined;
        },
        onMessage: (m, send) => {
          if (pending.length === 2 && m.message.case === "execServerMessage") {
            // Answer in reverse order once both are out.
            for (const exec of [...pending].reverse()) {
              const name = exec.message.case === "mcpArgs" ? exec.message.value.toolName : "?";
              send({ message: mcpReply(exec, `${name} ok`) });
              send({
                message: {
                  case: "execClientControlMessage",
                  value: { message: { case: "streamClose", value: { id: exec.id } } },
                },
              });
            }
          }
          return undefined;
        },
      },
    );
    expect(result.error).toBeUndefined();
    expect(pending).toHaveLength(2);
    expect(result.text).toBe("lookup returned: lookup ok\nweather returned: weather ok");
  });

  it("a tool that was not declared is not called", async () => {
    const result = await driveRun(client, runRequest("[[emu:tool missing {}]]"), new BlobStore(), { tools });
    expect(result.text).toBe("Tool missing is not available.");
    expect(execMessages(result.messages).map((e) => e.message.case)).toEqual(["requestContextArgs"]);
  });

  it("tools declared in run_request.mcp_tools count too", async () => {
    const first = runRequest("[[emu:tool lookup {}]]");
    if (first.message.case === "runRequest")
      first.message.value.mcpTools = create(McpToolsSchema, { mcpTools: [toolDefinition("lookup")] });
    const result = await driveRun(client, first, new BlobStore(), {
      onExec: (exec) => mcpReply(exec, "from mcp_tools"),
    });
    expect(result.text).toBe("lookup returned: from mcp_tools");
  });
});

describe("native execs", () => {
  it("shell parsing_result splits pipelines and lists, keeps quoted words, flags redirects and substitutions", () => {
    const parsed = parseShellCommand(`ls -la "my dir" | grep x && echo $(date) > out.txt; cat 'a;b'`);
    expect(parsed.parsingFailed).toBe(false);
    expect(parsed.executableCommands.map((c) => [c.name, ...c.args.map((a) => a.value)])).toEqual([
      ["ls", "-la", "my dir"],
      ["grep", "x"],
      ["echo", "$(date)", ">", "out.txt"],
      ["cat", "a;b"],
    ]);
    expect(parsed.hasRedirects).toBe(true);
    expect(parsed.hasCommandSubstitution).toBe(true);
    expect(parseShellCommand(`echo "open`).parsingFailed).toBe(true);
  });

  it("shell: shell_args with the directive's arguments, answered with shell_result", async () => {
    let seen: ExecServerMessage | undefined;
    const result = await driveRun(
      client,
      runRequest('[[emu:native shell {"command":"echo hi","working_directory":"/tmp"}]]'),
      new BlobStore(),
      {
        onExec: (exec) => {
          seen = exec;
          return {
            case: "execClientMessage",
            value: {
              id: exec.id,
              execId: exec.execId,
              message: {
                case: "shellResult",
                value: { result: { case: "success", value: { command: "echo hi", exitCode: 0, stdout: "hi\n" } } },
              },
            },
          };
        },
      },
    );
    expect(seen?.message.case === "shellArgs" && seen.message.value.workingDirectory).toBe("/tmp");
    // Current clients refuse a shell exec without parsing_result (cursor-protocol-addendum-2.md §6).
    const parsed = seen?.message.case === "shellArgs" ? seen.message.value.parsingResult : undefined;
    expect(parsed?.parsingFailed).toBe(false);
    expect(parsed?.executableCommands.map((c) => [c.name, c.args.map((a) => a.value), c.fullText])).toEqual([
      ["echo", ["hi"], "echo hi"],
    ]);
    expect(result.text).toBe("shell returned: hi");
    const completed = result.messages.find(
      (m) => m.message.case === "interactionUpdate" && m.message.value.message.case === "toolCallCompleted",
    );
    const update = completed?.message.case === "interactionUpdate" ? completed.message.value.message : undefined;
    expect(update?.case === "toolCallCompleted" && update.value.toolCall?.tool.case).toBe("shellToolCall");
  });

  it("read, ls, grep, write and fetch use their exec cases and reply from the typed results", async () => {
    const replies: Record<string, (exec: ExecServerMessage) => unknown> = {
      readArgs: (e) => ({
        id: e.id,
        execId: e.execId,
        message: {
          case: "readResult",
          value: {
            result: {
              case: "success",
              value: { path: "a.txt", output: { case: "content", value: "file body" }, totalLines: 1 },
            },
          },
        },
      }),
      lsArgs: (e) => ({
        id: e.id,
        execId: e.execId,
        message: {
          case: "lsResult",
          value: {
            result: {
              case: "success",
              value: {
                directoryTreeRoot: {
                  absPath: "/w",
                  childrenFiles: [{ name: "a.txt" }],
                  childrenDirs: [{ absPath: "/w/src" }],
                },
              },
            },
          },
        },
      }),
      grepArgs: (e) => ({
        id: e.id,
        execId: e.execId,
        message: {
          case: "grepResult",
          value: {
            result: {
              case: "success",
              value: { workspaceResults: { "/w": { result: { case: "files", value: { files: ["a.txt"] } } } } },
            },
          },
        },
      }),
      writeArgs: (e) => ({
        id: e.id,
        execId: e.execId,
        message: {
          case: "writeResult",
          value: { result: { case: "success", value: { path: "b.txt", linesCreated: 3 } } },
        },
      }),
      fetchArgs: (e) => ({
        id: e.id,
        execId: e.execId,
        message: {
          case: "fetchResult",
          value: { result: { case: "success", value: { url: "http://x", content: "page" } } },
        },
      }),
    };
    const directive =
      '[[emu:native read {"path":"a.txt"}]] [[emu:native ls {"path":"/w"}]] [[emu:native grep {"pattern":"x"}]] ' +
      '[[emu:native write {"path":"b.txt","fileText":"1\\n2\\n3"}]] [[emu:native fetch {"url":"http://x"}]]';
    const result = await driveRun(client, runRequest(directive), new BlobStore(), {
      onExec: (exec) => ({ case: "execClientMessage", value: replies[exec.message.case ?? ""]?.(exec) as never }),
    });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe(
      [
        "read returned: file body",
        "ls returned: src/, a.txt",
        "grep returned: a.txt",
        "write returned: wrote 3 lines to b.txt",
        "fetch returned: page",
      ].join("\n"),
    );
  });

  it("arguments that do not fit the exec message become a directive error, not an exec", async () => {
    const result = await driveRun(client, runRequest('[[emu:native read {"nope":1}]]'), new BlobStore());
    expect(result.text).toMatch(/^Directive error: arguments for read do not fit/);
  });
});

describe("thinking, tokens and rate", () => {
  it("[[emu:think N]] streams N reasoning tokens, then thinking_completed, then the answer", async () => {
    const result = await driveRun(client, runRequest("[[emu:think 12]] ponder this"), new BlobStore());
    expect(result.thinking.split(" ")).toHaveLength(12);
    const cases = updateCases(result).filter((c) => c !== "tokenDelta");
    expect(cases.indexOf("thinkingCompleted")).toBeGreaterThan(cases.lastIndexOf("thinkingDelta"));
    expect(cases.indexOf("textDelta")).toBeGreaterThan(cases.indexOf("thinkingCompleted"));
    expect(result.tokens).toBe(12 + 4);
  });

  it("[[emu:tokens N]] [[emu:rate TPS]] streams N tokens one delta each", async () => {
    const result = await driveRun(client, runRequest("[[emu:tokens 20]] [[emu:rate 2000]]"), new BlobStore());
    expect(updateCases(result).filter((c) => c === "textDelta")).toHaveLength(20);
    expect(result.tokens).toBe(20);
  });
});
