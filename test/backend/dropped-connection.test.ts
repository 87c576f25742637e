/**
 * A dropped connection retries a turn only while its caller's client has received nothing (docs/protocol.md §4.2):
 * a segment whose events are held back for a caller that answers in one piece (`holdEvents`) is retried even after
 * Cursor's output began, and yields one clean answer; a turn whose exec already reached the caller's executor is
 * never retried (the exec would run twice).
 */
import { describe, expect, it } from "vitest";
import type { SurfaceExecResult, SurfaceExecutor } from "../../src/backend/types.js";
import { ProxyError } from "../../src/util/errors.js";
import { collect, endOf, textOf, useFixture, userTurn } from "./harness.js";

describe("a dropped connection and what reached the caller", () => {
  const fx = useFixture({ transport: "http2" });

  /** Runs Cursor opened for one conversation. */
  const runsOf = (conversationId: string) =>
    fx.emulator.stats().turns.filter((turn) => turn.conversationId === conversationId).length;

  it("retries a held segment whose connection drops after Cursor's output began", async () => {
    const held = await collect(
      fx.client.startTurn(userTurn("held-drop", "[[emu:tokens 10]] [[emu:drop 3]]")).stream(undefined, {
        holdEvents: true,
      }),
    ).catch((error: unknown) => error);
    // Every attempt drops after three tokens: one attempt plus the harness's two retries, then the error.
    expect((held as ProxyError).code).toBe("backend_unavailable");
    expect(runsOf("held-drop")).toBe(3);

    const seen: string[] = [];
    const streamed = await (async () => {
      for await (const event of fx.client
        .startTurn(userTurn("streamed-drop", "[[emu:tokens 10]] [[emu:drop 3]]"))
        .stream()) {
        if (event.type === "text-delta") seen.push(event.text);
      }
    })().catch((error: unknown) => error);
    // The same turn without holding: its output was yielded, so it is never replayed.
    expect((streamed as ProxyError).code).toBe("backend_unavailable");
    expect(seen.length).toBeGreaterThan(0);
    expect(runsOf("streamed-drop")).toBe(1);
  });

  it("a held segment retried after another turn dropped their shared connection yields one clean answer", async () => {
    const prompt = "[[emu:rate 50]] [[emu:tokens 40]]";
    const expected = textOf(await collect(fx.client.startTurn(userTurn("held-reference", prompt)).stream()));
    const held = collect(fx.client.startTurn(userTurn("held-victim", prompt)).stream(undefined, { holdEvents: true }));
    await expect.poll(() => runsOf("held-victim"), { timeout: 10_000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // This turn drops the connection it shares with the held one.
    const dropper = await collect(fx.client.startTurn(userTurn("dropper", "[[emu:drop 0]]")).stream()).catch(
      (error: unknown) => error,
    );
    expect((dropper as ProxyError).code).toBe("backend_unavailable");
    const events = await held;
    expect(textOf(events)).toBe(expected);
    expect(endOf(events)).toBe("stop");
    expect(events.filter((event) => event.type === "usage")).toHaveLength(1);
    expect(runsOf("held-victim")).toBe(2);
  });

  it("never retries a turn whose exec reached the caller's executor", async () => {
    let release: (result: SurfaceExecResult) => void = () => {};
    let ran = 0;
    const executor: SurfaceExecutor = {
      workspacePath: "/work/project",
      run: () => {
        ran++;
        return new Promise((resolve) => (release = resolve));
      },
    };
    const turn = fx.client.startTurn(
      userTurn("exec-victim", '[[emu:native ls {"path":"/work/project"}]]', { executor }),
    );
    const outcome = collect(turn.stream()).catch((error: unknown) => error);
    await expect.poll(() => ran, { timeout: 10_000 }).toBe(1);
    // Another turn drops the connection while the exec runs in the caller's editor.
    await collect(fx.client.startTurn(userTurn("exec-dropper", "[[emu:drop 0]]")).stream()).catch(() => undefined);
    const error = await outcome;
    release({ kind: "output", content: "a.ts", isError: false });
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe("backend_unavailable");
    expect(runsOf("exec-victim")).toBe(1);
    expect(ran).toBe(1);
  });
});
