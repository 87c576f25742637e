import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ExecServerMessageSchema } from "../gen/agent/v1/exec_pb.js";
import { type ExecContext, handleExec, resultReplies } from "./exec-handler.js";
import { createToolNameMap } from "./tool-names.js";
import { encodeArgumentsMap } from "./value-codec.js";

const ctx: ExecContext = {
  environment: { osVersion: "linux 6.0", workspacePath: "/w", shell: "bash", timeZone: "UTC" },
  tools: [{ name: "read", description: "Reads a file", inputSchema: { type: "object" } }],
  toolNames: createToolNameMap(["read"]),
  systemPrompt: "",
  takenToolCallIds: new Set(),
  newHex: () => "0123456789abcdef",
};

describe("a client tool call waiting for its result", () => {
  it("keeps none of its arguments, and its result is still answered as an MCP result", () => {
    const message = create(ExecServerMessageSchema, {
      id: 7,
      execId: "exec-7",
      message: {
        case: "mcpArgs",
        value: {
          name: "read",
          toolName: "read",
          toolCallId: "call_1",
          args: encodeArgumentsMap({ filePath: `/repo/${"x".repeat(4096)}.ts` }),
        },
      },
    });
    const outcome = handleExec(message, ctx);
    if (outcome.kind !== "tool-call") throw new Error(`expected a tool call, got ${outcome.kind}`);
    expect(outcome.event.arguments).toContain("/repo/x");
    // A parked turn holds its pending calls until their results come: not the arguments it already handed out.
    expect(outcome.call.exec).toEqual({ case: "mcpArgs" });
    const [reply, close] = resultReplies(outcome.call, { content: "file text", isError: false });
    const result = reply?.message.case === "execClientMessage" ? reply.message.value : undefined;
    expect(result?.id).toBe(7);
    expect(result?.execId).toBe("exec-7");
    expect(result?.message).toMatchObject({
      case: "mcpResult",
      value: { result: { case: "success", value: { isError: false } } },
    });
    expect(close?.message.case).toBe("execClientControlMessage");
  });
});
