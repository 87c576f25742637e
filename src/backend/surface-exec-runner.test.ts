import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { AgentClientMessage } from "../gen/agent/v1/agent_pb.js";
import { ExecServerMessageSchema } from "../gen/agent/v1/exec_pb.js";
import { SurfaceExecRunner } from "./surface-exec-runner.js";
import type { SurfaceExecResult, SurfaceExecutor } from "./types.js";

const read = create(ExecServerMessageSchema, {
  id: 7,
  execId: "e7",
  message: { case: "readArgs", value: { path: "a.ts", toolCallId: "c1" } },
});

/** The runner over an executor answering `result`; resolves with what it sent for the one exec. */
function answerFor(result: unknown): Promise<readonly AgentClientMessage[]> {
  const executor: SurfaceExecutor = { workspacePath: "/w", run: async () => result as SurfaceExecResult };
  return new Promise((resolve, reject) => {
    const runner = new SurfaceExecRunner(executor, async (messages) => resolve(messages), reject);
    runner.start(read, { kind: "read", path: "a.ts" }, "c1");
  });
}

describe("SurfaceExecRunner", () => {
  it("answers a result it cannot convert as an error result saying so, never leaving the exec unanswered", async () => {
    const sent = await answerFor({ kind: "output", content: 5, isError: false });
    const reply = sent[0]?.message;
    expect(reply?.case).toBe("execClientMessage");
    const result = reply?.case === "execClientMessage" ? reply.value.message : undefined;
    expect(result?.case).toBe("readResult");
    const read = result?.case === "readResult" ? result.value.result : undefined;
    expect(read?.case).toBe("error");
    expect(read?.case === "error" ? read.value.error : "").toContain("could not be sent to Cursor");
    // The exec's stream is closed after its answer.
    expect(sent.at(-1)?.message.case).toBe("execClientControlMessage");
  });

  it("answers a good result as it is", async () => {
    const sent = await answerFor({ kind: "output", content: "text\n", isError: false });
    const reply = sent[0]?.message;
    const result = reply?.case === "execClientMessage" ? reply.value.message : undefined;
    expect(result?.case === "readResult" ? result.value.result.case : undefined).toBe("success");
  });
});
