/**
 * The parameterised catalogue (docs/protocol.md §6.1, cursor-protocol-addendum-3.md P1–P20, X1): AvailableModels
 * with use_model_parameters, the flat ids GetUsableModels joins to it, the server's checks of a Run's
 * requested_model, `[[emu:echo-model]]` and the allowed-tools header.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parameterisedCatalogue } from "../../src/emulator/catalogue.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { AiService } from "../../src/gen/aiserver/v1/ai_service_pb.js";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";
import { agentClient, BlobStore, cursorHeaders, driveRun, runRequest } from "./support/raw-client.js";

let emulator: Emulator;
let token: string;
beforeAll(async () => {
  emulator = await startEmulator();
  token = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});

function aiClient(useBinaryFormat = true) {
  return createClient(
    AiService,
    createConnectTransport({
      httpVersion: "2",
      baseUrl: emulator.url,
      useBinaryFormat,
      interceptors: [
        (next) => (request) => {
          for (const [k, v] of Object.entries(cursorHeaders(token))) request.header.set(k, v);
          return next(request);
        },
      ],
    }),
  );
}

describe("the catalogue", () => {
  it("has at least 8 base models of the families P2 describes", () => {
    const models = parameterisedCatalogue();
    expect(models.length).toBeGreaterThanOrEqual(8);
    const params = (id: string) => models.find((m) => m.id === id)?.parameters.map((p) => p.id);
    expect(params("claude-opus-4-8")).toEqual(["thinking", "context", "effort"]);
    expect(params("gpt-5.6-sol")).toEqual(["context", "reasoning", "fast"]);
    expect(params("composer-2.5")).toEqual(["fast"]);
    expect(params("gemini-3.7-flash")).toEqual(["effort"]);
    const gpt55 = models.find((m) => m.id === "gpt-5.5");
    expect(gpt55?.parameters.find((p) => p.id === "reasoning")?.values).toContain("extra-high");
    for (const model of models) {
      expect(
        model.variants.filter((v) => v.defaultNonMax),
        model.id,
      ).toHaveLength(1);
    }
  });

  it("AvailableModels with use_model_parameters answers the same in binary (bytes encoded at build time) and JSON", async () => {
    const binary = await aiClient().availableModels({ useModelParameters: true });
    const json = await aiClient(false).availableModels({ useModelParameters: true });
    expect(binary.models.length).toBeGreaterThan(30);
    expect(json).toEqual(binary);
  });

  it("AvailableModels with use_model_parameters answers base ids, definitions and variants (P18–P19)", async () => {
    const answer = await aiClient().availableModels({ useModelParameters: true });
    expect(answer.useModelParameters).toBe(true);
    const opus = answer.models.find((m) => m.name === "claude-opus-4-8");
    expect(opus?.parameterDefinitions.map((d) => d.id)).toEqual(["thinking", "context", "effort"]);
    const effort = opus?.parameterDefinitions.find((d) => d.id === "effort")?.parameterType?.type;
    expect(effort?.case === "enumParameter" && effort.value.values.map((v) => v.value)).toEqual([
      "low",
      "medium",
      "high",
      "xhigh",
      "max",
    ]);
    const defaultMax = opus?.variants.find((v) => v.isDefaultMaxConfig === true);
    expect(defaultMax?.isMaxMode).toBe(true);
    expect(defaultMax?.parameterValues).toContainEqual(expect.objectContaining({ id: "context", value: "1m" }));
    const grok = answer.models.find((m) => m.name === "grok-4.6");
    const high = grok?.variants.find((v) => v.variantStringRepresentation === "grok-4.6-high");
    expect(high?.legacySlug).toBe("cursor-grok-4.6-high");
    expect(grok?.legacySlugs).toContain("cursor-grok-4.6-high-fast");
    // Without the flag: the legacy flat rows, no parameters.
    const legacy = await aiClient().availableModels({});
    expect(legacy.models.some((m) => m.parameterDefinitions.length > 0)).toBe(false);
    expect(legacy.modelNames).toContain("claude-opus-4-8-thinking-high");
  });

  it("GetUsableModels lists the flat variant ids, not the bare base ids that need a suffix (P5)", async () => {
    const ids = (await aiClient().getUsableModels({})).models.map((m) => m.modelId);
    for (const id of ["gpt-5.5-high-fast", "claude-opus-4-8-thinking-xhigh", "cursor-grok-4.6-medium-fast"]) {
      expect(ids).toContain(id);
    }
    expect(ids).toContain("composer-2.5");
    expect(ids).not.toContain("claude-opus-4-8");
    expect(ids).not.toContain("kimi-k3");
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("a Run's model selection", () => {
  const run = async (text: string, options: Parameters<typeof runRequest>[1], overrides = {}) =>
    driveRun(agentClient(emulator.url, token, { overrides }), runRequest(text, options), new BlobStore());
  const detailOf = (error: unknown) =>
    (error as { findDetails(d: typeof ErrorDetailsSchema): { error: number }[] }).findDetails(ErrorDetailsSchema)[0];

  it("[[emu:echo-model]] reports requested_model, its parameters sorted, max_mode, model_details and the header", async () => {
    const result = await run(
      "[[emu:echo-model]]",
      {
        model: "claude-opus-4-8",
        requested: {
          parameters: [
            { id: "thinking", value: "true" },
            { id: "effort", value: "high" },
            { id: "context", value: "1m" },
          ],
          maxMode: true,
        },
      },
      { "x-cursor-agent-allowed-tools": "mcp_tool_call" },
    );
    expect(result.error).toBeUndefined();
    expect(result.text).toBe(
      "Model: claude-opus-4-8; params: context=1m,effort=high,thinking=true; max_mode: true; model_details: none; " +
        "allowed tools: mcp_tool_call",
    );
  });

  it("a flat id in model_details alone is echoed as such", async () => {
    const result = await run("[[emu:echo-model]]", { model: "gpt-5.5-high-fast" });
    expect(result.text).toBe(
      "Model: none; params: none; max_mode: false; model_details: gpt-5.5-high-fast; allowed tools: none",
    );
  });

  it("a bare base id in model_details is not_found, even with parameters (P8)", async () => {
    const result = await run("hi", { model: "kimi-k3", requested: { withModelDetails: true } });
    expect(result.error?.code).toBe(5);
    expect(detailOf(result.error)?.error).toBe(ErrorDetails_Error.NOT_FOUND);
  });

  it("an unknown id is not_found with ERROR_BAD_MODEL_NAME (E4)", async () => {
    const result = await run("hi", { model: "gpt-9-ultra", requested: {} });
    expect(result.error?.code).toBe(5);
    expect(detailOf(result.error)?.error).toBe(ErrorDetails_Error.BAD_MODEL_NAME);
  });

  it("a value the model lacks, or a parameter it does not have, is invalid_argument naming the allowed values", async () => {
    const bad = await run("hi", { model: "gpt-5.5", requested: { parameters: [{ id: "reasoning", value: "xhigh" }] } });
    expect(bad.error?.code).toBe(3);
    expect(bad.error?.rawMessage).toContain("allowed: none, low, medium, high, extra-high");
    const missing = await run("hi", {
      model: "composer-2.5",
      requested: { parameters: [{ id: "effort", value: "high" }] },
    });
    expect(missing.error?.code).toBe(3);
    expect(missing.error?.rawMessage).toContain('no parameter "effort"');
  });

  it("a base id in requested_model alone runs with the default variant's values", async () => {
    const result = await run("[[emu:echo-model]]", { model: "composer-2.5", requested: {} });
    expect(result.error).toBeUndefined();
    expect(result.text).toContain("Model: composer-2.5; params: none;");
  });
});

describe("x-cursor-agent-allowed-tools", () => {
  it("refuses a native directive whose tool is not allowed, and allows it when listed or absent", async () => {
    const text = '[[emu:native shell {"command":"echo hi"}]]';
    const refused = await driveRun(
      agentClient(emulator.url, token, { overrides: { "x-cursor-agent-allowed-tools": "mcp_tool_call" } }),
      runRequest(text),
      new BlobStore(),
    );
    expect(refused.error).toBeUndefined();
    expect(refused.text).toBe("Directive refused: shell is not an allowed tool");
    const allowed = await driveRun(
      agentClient(emulator.url, token, { overrides: { "x-cursor-agent-allowed-tools": "mcp_tool_call,shell" } }),
      runRequest(text),
      new BlobStore(),
      {
        onExec: (exec) => ({
          case: "execClientMessage",
          value: {
            id: exec.id,
            execId: exec.execId,
            message: {
              case: "shellResult",
              value: { result: { case: "success", value: { command: "echo hi", exitCode: 0, stdout: "hi\n" } } },
            },
          },
        }),
      },
    );
    expect(allowed.error).toBeUndefined();
    expect(allowed.text).not.toContain("Directive refused");
    expect(allowed.text).toContain("hi");
  });

  it("x-cursor-agent-exclude-tools takes tools away, by name or group; the group mcp does not allow shell (X1)", async () => {
    const refusedWith = async (overrides: Record<string, string>, directive: string, kind: string) => {
      const result = await driveRun(
        agentClient(emulator.url, token, { overrides }),
        runRequest(directive),
        new BlobStore(),
      );
      expect(result.error).toBeUndefined();
      return result.text === `Directive refused: ${kind} is not an allowed tool`;
    };
    const shell = '[[emu:native shell {"command":"echo hi"}]]';
    const read = '[[emu:native read {"path":"/tmp/a"}]]';
    expect(await refusedWith({ "x-cursor-agent-exclude-tools": "shell" }, shell, "shell")).toBe(true);
    expect(await refusedWith({ "x-cursor-agent-exclude-tools": "read_tool_call" }, read, "read")).toBe(true);
    expect(await refusedWith({ "x-cursor-agent-allowed-tools": "mcp" }, shell, "shell")).toBe(true);
    expect(
      await refusedWith(
        { "x-cursor-agent-allowed-tools": "read_tool_call", "x-cursor-agent-exclude-tools": "read_tool_call" },
        read,
        "read",
      ),
    ).toBe(true);
  });
});
