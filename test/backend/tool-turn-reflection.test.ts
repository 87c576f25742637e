/**
 * A turn answered by a client tool call decodes none of its server messages with reflection (`fromBinary`): the
 * tool-call updates and the `mcp_args` exec take tool-decode.ts, the rest streaming-decode.ts and turn-decode.ts.
 * Counted by wrapping `fromBinary` for the whole module graph of this file.
 */
import type * as protobuf from "@bufbuild/protobuf";
import { describe, expect, it, vi } from "vitest";
import type { AgentServerMessage } from "../../src/gen/agent/v1/agent_pb.js";
import { collect, endOf, queryTool, toolCallsOf, useFixture, userTurn } from "./harness.js";

const decoded = vi.hoisted(() => [] as string[]);

vi.mock("@bufbuild/protobuf", async (original) => {
  const actual = await original<typeof protobuf>();
  return {
    ...actual,
    fromBinary: ((schema, bytes, options) => {
      const message = actual.fromBinary(schema, bytes, options);
      if (schema.typeName === "agent.v1.AgentServerMessage") {
        const m = (message as AgentServerMessage).message;
        decoded.push(
          `${m.case}/${m.case === "interactionUpdate" || m.case === "execServerMessage" ? m.value.message.case : ""}`,
        );
      }
      return message;
    }) as typeof actual.fromBinary,
  };
});

describe.each(["http2", "http1"] as const)("a client tool turn over %s", (transport) => {
  const fx = useFixture({ transport });

  it("decodes no server message with reflection", async () => {
    decoded.length = 0;
    const args = '{"q":"a long enough query for several argument snapshots, ünïcødé ✓"}';
    const turn = fx.client.startTurn(
      userTurn(`${transport}-reflection`, `[[emu:tool lookup ${args}]]`, { tools: [queryTool()] }),
    );
    const events = await collect(turn.stream());
    expect(toolCallsOf(events).map((c) => JSON.parse(c.arguments))).toEqual([JSON.parse(args)]);
    expect(endOf(events)).toBe("tool-calls");
    expect(decoded).toEqual([]);
    await turn.close();
  }, 10_000);
});
