import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type ModelDetails, ModelDetailsSchema } from "../gen/agent/v1/models_pb.js";
import { AvailableModelSchema } from "../gen/aiserver/v1/ai_service_pb.js";
import {
  contextTier,
  createModelCatalog,
  resolveModelId,
  servedModelId,
  toModelInfo,
  toModelList,
  visionFor,
} from "./models.js";
import type { ModelInfo } from "./types.js";

const model = (init: Parameters<typeof create<typeof ModelDetailsSchema>>[1]) => create(ModelDetailsSchema, init);

describe("models", () => {
  it("maps auto to default", () => {
    expect(resolveModelId("auto")).toBe("default");
    expect(resolveModelId("gpt-5.2")).toBe("gpt-5.2");
  });

  it("derives display name, reasoning and max mode", () => {
    expect(toModelInfo(model({ modelId: "m", displayNameShort: "Short", thinkingDetails: {}, maxMode: true }))).toEqual(
      {
        id: "m",
        displayName: "Short",
        aliases: [],
        reasoning: true,
        maxMode: true,
        vision: false,
      },
    );
    expect(toModelInfo(model({ modelId: "plain" })).reasoning).toBe(false);
  });

  it("guarantees an auto entry", () => {
    expect(toModelList([model({ modelId: "x" })])[0]?.id).toBe("auto");
    expect(toModelList([model({ modelId: "default" })])[0]?.aliases).toContain("auto");
  });

  it("caches for the TTL and fetches single-flight", async () => {
    let now = 0;
    let calls = 0;
    const catalog = createModelCatalog({
      fetch: async () => {
        calls += 1;
        return [model({ modelId: "m", thinkingDetails: {} })] as ModelDetails[];
      },
      ttlMs: 100,
      now: () => now,
    });
    await Promise.all([catalog.list(), catalog.list()]);
    expect(calls).toBe(1);
    expect(catalog.peek("m")?.reasoning).toBe(true);
    now = 50;
    await catalog.list();
    expect(calls).toBe(1);
    now = 150;
    await catalog.list();
    expect(calls).toBe(2);
  });

  it("a caller joins a prefetch in flight, and fetches again itself when the prefetch failed", async () => {
    let calls = 0;
    const answers: Array<(fail: boolean) => void> = [];
    /** A catalog whose fetches each wait for the test to answer them (`answers`, in order). */
    const heldCatalog = () =>
      createModelCatalog({
        fetch: () => {
          calls += 1;
          return new Promise<ModelDetails[]>((resolve, reject) =>
            answers.push((fail) => (fail ? reject(new Error("offline")) : resolve([model({ modelId: "m" })]))),
          );
        },
        ttlMs: 60_000,
        now: () => 0,
      });
    const catalog = heldCatalog();
    // Joined and answered: one fetch for both.
    const prefetched = catalog.list(undefined, { prefetch: true });
    const joined = catalog.list();
    expect(calls).toBe(1);
    answers[0]?.(false);
    await expect(prefetched).resolves.toHaveLength(2);
    await expect(joined).resolves.toHaveLength(2);
    expect(calls).toBe(1);

    // Joined and failed: the prefetch gets its error, the caller that joined it fetches again and gets the list.
    const other = heldCatalog();
    calls = 0;
    answers.length = 0;
    const failing = other.list(undefined, { prefetch: true });
    const first = other.list();
    const second = other.list();
    expect(calls).toBe(1);
    answers[0]?.(true);
    await expect(failing).rejects.toThrow("offline");
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(calls).toBe(2);
    answers[1]?.(false);
    await expect(first).resolves.toHaveLength(2);
    await expect(second).resolves.toHaveLength(2);
    expect(calls).toBe(2);
  });

  it("callers sharing an ordinary fetch share its failure (no second fetch)", async () => {
    let calls = 0;
    const catalog = createModelCatalog({
      fetch: async () => {
        calls += 1;
        throw new Error("offline");
      },
      ttlMs: 60_000,
      now: () => 0,
    });
    const results = await Promise.allSettled([catalog.list(), catalog.list()]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(calls).toBe(1);
  });
});

describe("image support (vision)", () => {
  it("uses the family table when Cursor does not say, and auto/default always accept images", () => {
    expect(
      ["default", "auto", "claude-4.6-opus-high", "gpt-5.3-codex", "gemini-3.1-pro", "composer-1.5"].map((id) =>
        visionFor(id),
      ),
    ).toEqual([true, true, true, true, true, true]);
    expect(visionFor("grok-code-fast-1")).toBe(false);
    expect(visionFor("some-new-family-1")).toBe(false);
  });

  it("prefers Cursor's AvailableModels answer over the table, and config overrides over both", () => {
    const upstream = new Map([
      ["claude-4.5-sonnet", false],
      ["some-new-family-1", true],
    ]);
    expect(visionFor("claude-4.5-sonnet", { upstream })).toBe(false);
    expect(visionFor("some-new-family-1", { upstream })).toBe(true);
    expect(visionFor("gpt-5.2", { upstream })).toBe(true);
    const overrides = ["grok-code-fast-1", "-gpt-5.2", "-default"];
    expect(visionFor("grok-code-fast-1", { overrides, upstream })).toBe(true);
    expect(visionFor("gpt-5.2", { overrides, upstream })).toBe(false);
    expect(visionFor("default", { overrides })).toBe(false);
  });

  it("asks AvailableModels alongside GetUsableModels and falls back to the table when it fails", async () => {
    const details = [model({ modelId: "claude-4.5-sonnet" }), model({ modelId: "grok-code-fast-1" })] as ModelDetails[];
    const answering = createModelCatalog({
      fetch: async () => details,
      fetchAvailable: async () => [
        create(AvailableModelSchema, { name: "claude-4.5-sonnet", supportsImages: false }),
        create(AvailableModelSchema, { name: "grok-code-fast-1", supportsImages: true }),
      ],
      ttlMs: 100,
      now: () => 0,
    });
    expect((await answering.list()).map((m) => [m.id, m.vision])).toEqual([
      ["auto", true],
      ["claude-4.5-sonnet", false],
      ["grok-code-fast-1", true],
    ]);
    const failing = createModelCatalog({
      fetch: async () => details,
      fetchAvailable: async () => {
        throw new Error("unimplemented");
      },
      visionOverrides: ["-claude-4.5-sonnet"],
      ttlMs: 100,
      now: () => 0,
    });
    expect((await failing.list()).map((m) => [m.id, m.vision])).toEqual([
      ["auto", true],
      ["claude-4.5-sonnet", false],
      ["grok-code-fast-1", false],
    ]);
  });
});

describe("servedModelId (routed_model, cursor-protocol-addendum-2.md §4)", () => {
  const list: ModelInfo[] = [
    { id: "default", displayName: "Auto", aliases: ["auto"], reasoning: false, maxMode: false, vision: true },
    { id: "composer-1.5", displayName: "Composer 1.5", aliases: [], reasoning: true, maxMode: false, vision: true },
    {
      id: "claude-4.6-opus-high",
      displayName: "Claude 4.6 Opus",
      aliases: ["opus-4.6"],
      reasoning: true,
      maxMode: true,
      vision: true,
    },
  ];
  it("maps a display name to its id (exact, then case-insensitive), then ids and aliases", () => {
    expect(servedModelId(list, "Composer 1.5")).toBe("composer-1.5");
    expect(servedModelId(list, " claude 4.6 opus ")).toBe("claude-4.6-opus-high");
    expect(servedModelId(list, "opus-4.6")).toBe("claude-4.6-opus-high");
  });
  it("keeps the display name when no model matches", () => {
    expect(servedModelId(list, "Mystery Model 9")).toBe("Mystery Model 9");
  });
});

describe("the parameterised catalogue joined with the flat list (docs/protocol.md §6.1)", () => {
  const flat = [
    model({ modelId: "gpt-5.5-high-fast", displayName: "GPT-5.5 High Fast" }),
    model({ modelId: "composer-1" }),
  ];
  const gpt = create(AvailableModelSchema, {
    name: "gpt-5.5",
    clientDisplayName: "GPT-5.5",
    contextTokenLimit: 272_000,
    parameterDefinitions: [
      {
        id: "reasoning",
        parameterType: { type: { case: "enumParameter", value: { values: [{ value: "low" }, { value: "high" }] } } },
      },
    ],
    variants: [
      {
        parameterValues: [
          { id: "reasoning", value: "low" },
          { id: "fast", value: "false" },
        ],
        isDefaultNonMaxConfig: true,
        legacySlug: "gpt-5.5-low",
      },
      {
        parameterValues: [
          { id: "reasoning", value: "high" },
          { id: "fast", value: "true" },
        ],
        legacySlug: "gpt-5.5-high-fast",
        variantStringRepresentation: "gpt-5.5-high-fast",
      },
    ],
  });
  const catalog = (fetchAvailable: () => Promise<never[] | (typeof gpt)[]>) =>
    createModelCatalog({ fetch: async () => flat, fetchAvailable, ttlMs: 60_000, now: () => 0 });

  it("adds the base with its parameters (values from definitions and variants) and marks the flat rows as variants", async () => {
    const list = await catalog(async () => [gpt]).list();
    const base = list.find((m) => m.id === "gpt-5.5");
    expect(base?.parameters).toEqual([
      { id: "reasoning", values: ["low", "high"] },
      { id: "fast", values: ["false", "true"] },
    ]);
    expect(base?.defaults).toEqual({ params: { reasoning: "low", fast: "false" }, variant: "gpt-5.5-low" });
    expect(base?.contextWindow).toBe(272_000);
    expect(list.find((m) => m.id === "gpt-5.5-high-fast")?.variant).toEqual({
      base: "gpt-5.5",
      params: { reasoning: "high", fast: "true" },
      maxMode: false,
    });
    expect(list.filter((m) => m.id === "gpt-5.5-high-fast")).toHaveLength(1);
    expect(list.find((m) => m.id === "gpt-5.5-low")?.variant?.base).toBe("gpt-5.5");
  });

  it("a variant takes images as its base does, also a flat row listed under another prefix (cursor-grok-…)", async () => {
    const grok = create(AvailableModelSchema, {
      name: "grok-4.6",
      supportsImages: true,
      variants: [
        {
          parameterValues: [{ id: "effort", value: "low" }],
          legacySlug: "cursor-grok-4.6-low",
          isDefaultNonMaxConfig: true,
        },
        { parameterValues: [{ id: "effort", value: "high" }], legacySlug: "cursor-grok-4.6-high" },
      ],
    });
    const rows = [model({ modelId: "cursor-grok-4.6-low" }), model({ modelId: "cursor-grok-4.6-high" })];
    const list = (visionOverrides: string[] = []) =>
      createModelCatalog({
        fetch: async () => rows,
        fetchAvailable: async () => [grok],
        visionOverrides,
        ttlMs: 60_000,
        now: () => 0,
      }).list();
    // The family table knows `grok-` ids, not `cursor-grok-` ones: without the base's answer these said no images.
    const vision = (models: ModelInfo[]) => Object.fromEntries(models.map((m) => [m.id, m.vision]));
    expect(vision(await list())).toMatchObject({
      "grok-4.6": true,
      "cursor-grok-4.6-low": true,
      "cursor-grok-4.6-high": true,
    });
    expect(vision(await list(["-cursor-grok-4.6-high"]))).toMatchObject({
      "cursor-grok-4.6-low": true,
      "cursor-grok-4.6-high": false,
    });
  });

  it("takes each variant's window from its context tier, which Cursor sends where the limit fields are empty (P15)", async () => {
    const opus = create(AvailableModelSchema, {
      name: "claude-opus-4-8",
      parameterDefinitions: [
        {
          id: "context",
          parameterType: { type: { case: "enumParameter", value: { values: [{ value: "300k" }, { value: "1m" }] } } },
        },
      ],
      variants: [
        {
          parameterValues: [{ id: "context", value: "300k" }],
          isDefaultNonMaxConfig: true,
          legacySlug: "claude-opus-4-8-high",
        },
        {
          parameterValues: [{ id: "context", value: "1m" }],
          isMaxMode: true,
          isDefaultMaxConfig: true,
          legacySlug: "claude-opus-4-8-high-1m",
        },
      ],
    });
    const list = await createModelCatalog({
      fetch: async () => [],
      fetchAvailable: async () => [opus],
      ttlMs: 60_000,
      now: () => 0,
    }).list();
    expect(list.find((m) => m.id === "claude-opus-4-8")?.contextWindow).toBe(300_000);
    expect(list.find((m) => m.id === "claude-opus-4-8-high")?.contextWindow).toBe(300_000);
    expect(list.find((m) => m.id === "claude-opus-4-8-high-1m")?.contextWindow).toBe(1_000_000);
    expect([contextTier("272k"), contextTier("1M"), contextTier("max"), contextTier(undefined)]).toEqual([
      272_000,
      1_000_000,
      undefined,
      undefined,
    ]);
  });

  it("falls back to the flat list when AvailableModels fails", async () => {
    const list = await catalog(async () => {
      throw new Error("unavailable");
    }).list();
    expect(list.map((m) => m.id)).toEqual(["auto", "gpt-5.5-high-fast", "composer-1"]);
    expect(list.some((m) => m.parameters !== undefined || m.variant !== undefined)).toBe(false);
  });
});
