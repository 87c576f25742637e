import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InteractionQuerySchema } from "../gen/agent/v1/interaction_query_pb.js";
import { answerInteractionQuery } from "./interaction-query.js";
import { buildRequestContext, PROVIDER_IDENTIFIER } from "./request-context.js";
import { createToolNameMap } from "./tool-names.js";
import { decodeJsonValue } from "./value-codec.js";

describe("buildRequestContext", () => {
  const tools = [
    {
      name: "mcp.fs/read file",
      description: "Reads.",
      inputSchema: { type: "object", properties: { p: { type: "string" } } },
    },
    { name: "noargs", description: "No schema.", inputSchema: {} },
  ];
  const context = buildRequestContext({
    environment: { osVersion: "linux 6.0", workspacePath: "/w", shell: "bash", timeZone: "Europe/Paris" },
    tools,
    toolNames: createToolNameMap(tools.map((t) => t.name)),
    systemPrompt: "Be brief.",
  });

  it("describes the workspace", () => {
    expect(context.env).toMatchObject({
      osVersion: "linux 6.0",
      workspacePaths: ["/w"],
      shell: "bash",
      timeZone: "Europe/Paris",
    });
  });

  it("declares tools under sanitised names with Value-encoded schemas", () => {
    expect(context.tools.map((t) => [t.name, t.toolName, t.providerIdentifier])).toEqual([
      ["mcp_fs_read_file", "mcp_fs_read_file", PROVIDER_IDENTIFIER],
      ["noargs", "noargs", PROVIDER_IDENTIFIER],
    ]);
    expect(decodeJsonValue(context.tools[0]?.inputSchema ?? new Uint8Array())).toEqual(tools[0]?.inputSchema);
    expect(decodeJsonValue(context.tools[1]?.inputSchema ?? new Uint8Array())).toEqual({
      type: "object",
      properties: {},
      required: [],
    });
  });

  it("encodes a tool list's definitions once per list and name map, and never lets one list answer for another", () => {
    const environment = { osVersion: "linux 6.0", workspacePath: "/w", shell: "bash", timeZone: "UTC" };
    const names = createToolNameMap(tools.map((t) => t.name));
    const first = buildRequestContext({ environment, tools, toolNames: names, systemPrompt: "" });
    const again = buildRequestContext({ environment, tools, toolNames: names, systemPrompt: "" });
    // The same definitions (no second encoding); with the same environment and system prompt, the same context.
    expect(again.tools[0]).toBe(first.tools[0]);
    expect(again).toBe(first);
    const prompted = buildRequestContext({ environment, tools, toolNames: names, systemPrompt: "Be brief." });
    expect(prompted).not.toBe(first);
    expect(prompted.tools[0]).toBe(first.tools[0]);
    expect(prompted.tools).not.toBe(first.tools);
    // Another list (even with equal content) and another name map are built afresh.
    const copy = tools.map((t) => ({ ...t, description: `${t.description} (v2)` }));
    const other = buildRequestContext({ environment, tools: copy, toolNames: names, systemPrompt: "" });
    expect(other.tools[0]?.description).toBe("Reads. (v2)");
    const renamed = createToolNameMap(["read", "noargs"]);
    const viaOtherNames = buildRequestContext({ environment, tools, toolNames: renamed, systemPrompt: "" });
    expect(viaOtherNames.tools[0]).not.toBe(first.tools[0]);
  });

  it("carries the system prompt as cloud_rule", () => {
    expect(context.cloudRule).toBe("Be brief.");
  });

  it("answers the same context again for the same tools, environment and system prompt, a new one when any differs", () => {
    const environment = { osVersion: "linux 6.0", workspacePath: "/w", shell: "bash", timeZone: "UTC" };
    const toolNames = createToolNameMap(tools.map((t) => t.name));
    const input = { environment, tools, toolNames, systemPrompt: "Be brief." };
    const first = buildRequestContext(input);
    expect(buildRequestContext({ ...input })).toBe(first);
    const otherPrompt = buildRequestContext({ ...input, systemPrompt: "Be long." });
    expect(otherPrompt).not.toBe(first);
    expect(otherPrompt.cloudRule).toBe("Be long.");
    const otherEnvironment = buildRequestContext({ ...input, environment: { ...environment, workspacePath: "/x" } });
    expect(otherEnvironment.env?.workspacePaths).toEqual(["/x"]);
    const otherTools = [...tools];
    const withOtherTools = buildRequestContext({ ...input, tools: otherTools });
    expect(withOtherTools).not.toBe(otherEnvironment);
    expect(withOtherTools.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    expect(buildRequestContext({ ...input, toolNames: createToolNameMap([]) }).tools).toEqual([]);
  });
});

describe("answerInteractionQuery", () => {
  it("answers with the same id and a rejection of the matching case", () => {
    const web = create(InteractionQuerySchema, { id: 7, query: { case: "webSearchRequestQuery", value: {} } });
    const answer = answerInteractionQuery(web, "no");
    expect(answer.id).toBe(7);
    expect(answer.result).toEqual({
      case: "webSearchRequestResponse",
      value: { result: { case: "rejected", value: { reason: "no" } } },
    });
    const ask = create(InteractionQuerySchema, { id: 8, query: { case: "askQuestionInteractionQuery", value: {} } });
    expect(answerInteractionQuery(ask).result?.case).toBe("askQuestionInteractionResponse");
  });
});
