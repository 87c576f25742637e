/**
 * A mode switch Cursor's model asks for (`switch_mode_request_query`, docs/protocol.md §4.9) between the agent
 * client and the emulator: without a surface executor that decides it (the HTTP doors) it is approved as current
 * clients do; a surface executor's verdict is what Cursor gets, however long the executor takes (its user is
 * deciding: not a stall), and an executor that fails is a rejection naming why.
 */
import { describe, expect, it } from "vitest";
import type { ModeSwitchRequest, SurfaceExecutor } from "../../src/backend/types.js";
import { collect, endOf, textOf, useFixture, userTurn } from "./harness.js";

const ASK = "[[emu:switch-mode plan The change needs a plan first.]]";

function executor(switchMode?: SurfaceExecutor["switchMode"]): SurfaceExecutor {
  return {
    workspacePath: "/tmp",
    run: async () => ({ kind: "rejected", reason: "no execs in this test" }),
    ...(switchMode === undefined ? {} : { switchMode }),
  };
}

describe("mode switch queries", () => {
  const fx = useFixture({ transport: "http2", client: { stallTimeoutMs: 400 } });

  it("approves the switch when no surface decides it (the HTTP doors)", async () => {
    const events = await collect(fx.client.startTurn(userTurn("mode-none", ASK)).stream());
    expect(textOf(events)).toContain("Mode switch to plan: approved");
    expect(endOf(events)).toBe("stop");
  });

  it("approves the switch for an executor that does not decide mode switches", async () => {
    const events = await collect(fx.client.startTurn(userTurn("mode-exec", ASK, { executor: executor() })).stream());
    expect(textOf(events)).toContain("Mode switch to plan: approved");
  });

  it("sends the executor's verdict, waiting for it past the stall timeout", async () => {
    const asked: ModeSwitchRequest[] = [];
    const decide: SurfaceExecutor["switchMode"] = async (request) => {
      asked.push(request);
      // The user takes longer than the stall timeout (400 ms) to answer.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { approved: false, reason: "The user said no." };
    };
    const request = userTurn("mode-decided", ASK, { executor: executor(decide) });
    const events = await collect(fx.client.startTurn(request).stream());
    expect(asked).toEqual([
      {
        targetModeId: "plan",
        explanation: "The change needs a plan first.",
        toolCallId: expect.stringMatching(/^toolu_mode_/),
      },
    ]);
    expect(textOf(events)).toContain("Mode switch to plan was rejected: The user said no.");
    expect(endOf(events)).toBe("stop");
  });

  it("rejects the switch, naming why, when the executor fails", async () => {
    const decide: SurfaceExecutor["switchMode"] = async () => {
      throw new Error("the editor went away");
    };
    const events = await collect(
      fx.client.startTurn(userTurn("mode-failed", ASK, { executor: executor(decide) })).stream(),
    );
    expect(textOf(events)).toContain(
      "Mode switch to plan was rejected: The mode switch could not be decided (the editor went away).",
    );
  });
});
