/**
 * A turn answered by Cursor's native tools (redirected to the caller's equivalent tools, native-redirect.ts) decodes
 * none of its server messages with reflection (`fromBinary`): the native exec args and the tool-call updates carrying
 * a native `ToolCall` case take native-tool-decode.ts, the rest the other hand-written decoders. Counted by wrapping
 * `fromBinary` for the whole module graph of this file.
 */
import type * as protobuf from "@bufbuild/protobuf";
import { describe, expect, it, vi } from "vitest";
import type { ClientTool } from "../../src/backend/types.js";
import type { AgentServerMessage } from "../../src/gen/agent/v1/agent_pb.js";
import { collect, endOf, toolCallsOf, useFixture, userTurn } from "./harness.js";

const decoded = vi.hoisted(() => [] as string[]);

vi.mock("@bufbuild/protobuf", async (original) => {
  const actual = await original<typeof protobuf>();
  return {
    ...actual,
    fromBinary: ((schema, bytes, options) => {
      const message = actual.fromBinary(schema, bytes, options);
      if (schema.typeName === "agent.v1.AgentServerMessage") {
        const m = (message as AgentServerMessage).message;
        let inner = "";
        if (m.case === "interactionUpdate") {
          const u = m.value.message;
          inner = u.case ?? "";
          if (u.case === "partialToolCall" || u.case === "toolCallStarted" || u.case === "toolCallCompleted") {
            inner += `:${u.value.toolCall?.tool.case}`;
          }
        } else if (m.case === "execServerMessage") inner = m.value.message.case ?? "";
        decoded.push(`${m.case}/${inner}`);
      }
      return message;
    }) as typeof actual.fromBinary,
  };
});

const tool = (name: string, ...properties: string[]): ClientTool => ({
  name,
  description: `The ${name} tool.`,
  inputSchema: {
    type: "object",
    properties: Object.fromEntries(properties.map((p) => [p, { type: "string" }])),
    required: [properties[0] as string],
  },
});
const TOOLS = [
  tool("bash", "command", "description", "workdir"),
  tool("read", "filePath"),
  tool("write", "filePath", "content"),
  tool("glob", "pattern", "path"),
  tool("grep", "pattern", "path", "include"),
  tool("webfetch", "url", "format"),
];

describe.each(["http2", "http1"] as const)("a native tool turn over %s", (transport) => {
  const fx = useFixture({ transport });

  it.each([
    ["read", '{"path":"/work/project/ünï.ts"}'],
    ["ls", '{"path":"/work/project"}'],
    ["grep", '{"pattern":"TODO","path":"src"}'],
    ["shell", '{"command":"ls -la | wc -l"}'],
    ["write", '{"path":"/work/project/a.txt","fileText":"hello ✓\\n"}'],
    ["fetch", '{"url":"https://example.com/"}'],
  ])(
    "decodes no server message of a native %s with reflection",
    async (kind, args) => {
      decoded.length = 0;
      const turn = fx.client.startTurn(
        userTurn(`${transport}-native-${kind}`, `[[emu:native ${kind} ${args}]]`, { tools: TOOLS }),
      );
      const calls = toolCallsOf(await collect(turn.stream()));
      expect(calls).toHaveLength(1);
      const second = await collect(
        turn.resume([{ toolCallId: calls[0]?.toolCallId ?? "", content: "some result", isError: false }]),
      );
      expect(endOf(second)).toBe("stop");
      expect(decoded).toEqual([]);
    },
    10_000,
  );
});
