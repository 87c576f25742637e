import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type ModelDetails, ModelDetailsSchema } from "../gen/agent/v1/models_pb.js";
import { createModelCatalog, resolveModelId, toModelInfo, toModelList } from "./models.js";

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
});
