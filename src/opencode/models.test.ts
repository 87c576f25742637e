import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type BridgeModel,
  configModels,
  createModelCache,
  parseModelList,
  toCatalogModel,
  toConfigModel,
} from "./models.js";

const sonnet: BridgeModel = {
  id: "claude-4.5-sonnet",
  display_name: "Claude 4.5 Sonnet",
  context_window: 200_000,
  reasoning: false,
  tool_calls: true,
  vision: true,
};

describe("plugin model list", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps only well-formed /v1/models entries", () => {
    const body = {
      object: "list",
      data: [{ ...sonnet, object: "model", owned_by: "cursor" }, { id: "broken" }, null, { ...sonnet, id: "" }],
    };
    expect(parseModelList(body)).toEqual([sonnet]);
    expect(parseModelList({ data: "nope" })).toEqual([]);
    expect(parseModelList(undefined)).toEqual([]);
  });

  it("maps a model to a config entry and lets the user's entries win", () => {
    expect(toConfigModel({ ...sonnet, display_name: "" }).name).toBe(sonnet.id);
    const entries = configModels([sonnet, { ...sonnet, id: "composer-1", vision: false }], {
      "claude-4.5-sonnet": { name: "Mine" },
    });
    expect(entries["claude-4.5-sonnet"]).toEqual({ name: "Mine" });
    expect(entries["composer-1"]).toMatchObject({ attachment: false, modalities: { input: ["text"] } });
  });

  it("gives a parameterised model one OpenCode variant per effort tier, in both lists and through the cache", async () => {
    const opus = {
      ...sonnet,
      id: "gpt-5.5",
      cursor_bridge: {
        base: "gpt-5.5",
        parameters: [
          { id: "reasoning", values: ["none", "low", "extra-high"] },
          { id: "fast", values: ["false", "true"] },
        ],
      },
    };
    const [parsed] = parseModelList({ data: [opus] });
    expect(parsed?.efforts).toEqual(["none", "low", "xhigh"]);
    const variants = {
      none: { reasoningEffort: "none" },
      low: { reasoningEffort: "low" },
      xhigh: { reasoningEffort: "xhigh" },
    };
    // OpenCode's own tier names the model lacks are disabled in the config entry (it merges its own in there).
    const disabled = { disabled: true };
    expect(toConfigModel({ ...(parsed as BridgeModel), reasoning: true }).variants).toEqual({
      ...variants,
      medium: disabled,
      high: disabled,
    });
    expect(toCatalogModel(parsed as BridgeModel, "cursor", "@ai-sdk/openai-compatible").variants).toEqual(variants);
    expect(toConfigModel({ ...sonnet, reasoning: true }).variants).toEqual({
      low: disabled,
      medium: disabled,
      high: disabled,
    });
    expect(toConfigModel({ ...sonnet, reasoning: false })).not.toHaveProperty("variants");
    expect(toCatalogModel(sonnet, "cursor", "@ai-sdk/openai-compatible").variants).toEqual({});
    const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-models-"));
    dirs.push(dir);
    const cache = createModelCache(join(dir, "models.json"));
    await cache.write("http://a", [parsed as BridgeModel], 1000);
    expect((await cache.read("http://a"))?.models[0]?.efforts).toEqual(["none", "low", "xhigh"]);
  });

  it("gives a flat id the tiers it has a listed sibling id for, and an id naming its tier none", () => {
    const flat = (id: string, extra: object = {}) => ({ ...sonnet, id, ...extra });
    const models = parseModelList({
      data: [
        flat("gpt-5.3-codex"),
        flat("gpt-5.3-codex-low"),
        flat("gpt-5.3-codex-extra-high"),
        flat("gpt-5.3-codex-fast"),
        flat("gpt-5.3-codex-high-fast"),
        flat("claude-opus-4-8-thinking-low-1m", {
          cursor_bridge: { base: "claude-opus-4-8", params: { effort: "low" } },
        }),
        flat("claude-opus-4-8-thinking-low-1m-high"),
      ],
    });
    const efforts = Object.fromEntries(models.map((m) => [m.id, m.efforts]));
    expect(efforts).toEqual({
      "gpt-5.3-codex": ["low", "xhigh"],
      "gpt-5.3-codex-low": undefined,
      "gpt-5.3-codex-extra-high": undefined,
      "gpt-5.3-codex-fast": ["high"],
      "gpt-5.3-codex-high-fast": undefined,
      // A variant id's tier is fixed by the id, whatever else is listed.
      "claude-opus-4-8-thinking-low-1m": undefined,
      "claude-opus-4-8-thinking-low-1m-high": undefined,
    });
  });

  it("caches per Cursor API URL in a 0600 file and treats a broken file as empty", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-models-"));
    dirs.push(dir);
    const path = join(dir, "nested", "opencode-models.json");
    const cache = createModelCache(path);
    expect(await cache.read("http://a")).toBeUndefined();
    await cache.write("http://a", [sonnet], 1000);
    await cache.write("http://b", [{ ...sonnet, id: "gpt-5.2" }], 2000);
    expect(await cache.read("http://a")).toEqual({ savedAt: 1000, models: [sonnet] });
    expect((await cache.read("http://b"))?.models.map((m) => m.id)).toEqual(["gpt-5.2"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    writeFileSync(path, "{not json");
    expect(await cache.read("http://a")).toBeUndefined();
    await cache.write("http://a", [sonnet], 3000);
    expect((await cache.read("http://a"))?.savedAt).toBe(3000);
  });
});
