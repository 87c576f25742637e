import { describe, expect, it } from "vitest";
import { parseCatalogueFile } from "./catalogue.js";
import { AUTO_ROUTES_TO, createModelCatalogue, parseModelsFile } from "./models.js";

describe("the emulator's model catalogue", () => {
  it("serves the current ids (cursor-protocol-addendum-2.md §10, cursor-protocol.md §6)", () => {
    const ids = createModelCatalogue()
      .usable()
      .map((m) => m.modelId);
    for (const id of [
      "default",
      "composer-1.5",
      "composer-2",
      "composer-2-fast",
      "claude-4.5-opus-high",
      "claude-4.5-opus-high-thinking",
      "claude-4.6-opus-high",
      "claude-4.6-opus-high-thinking",
      "claude-4.6-sonnet-medium",
      "gpt-5.1-codex-max-high",
      "gpt-5.2-high",
      "gpt-5.2-codex-xhigh-fast",
      "gpt-5.3-codex-low",
      "gpt-5.3-codex-spark-preview",
      "gpt-5.4-medium",
      "gemini-3-flash",
      "gemini-3.1-pro",
      "grok-code-fast-1",
    ]) {
      expect(ids, id).toContain(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("routes auto / default to composer-1.5 and nothing else", () => {
    const catalogue = createModelCatalogue();
    const auto = catalogue.find("auto");
    expect(auto?.id).toBe("default");
    expect(auto && catalogue.route(auto)).toMatchObject({ id: AUTO_ROUTES_TO, displayName: "Composer 1.5" });
    const composer = catalogue.find("composer-2");
    expect(composer && catalogue.route(composer)).toBe(composer);
  });

  it("adds the ids of a --models file, named by their id", () => {
    const catalogue = createModelCatalogue(parseModelsFile("# extra\nacme-9-pro\n\n  gpt-5.2 # already there\n"));
    expect(catalogue.find("acme-9-pro")).toMatchObject({ id: "acme-9-pro", displayName: "acme-9-pro" });
    const ids = catalogue.usable().map((m) => m.modelId);
    expect(ids.filter((id) => id === "gpt-5.2")).toHaveLength(1);
    expect(catalogue.available().modelNames).toContain("acme-9-pro");
  });

  it("refuses a line that is not a model id, naming the line", () => {
    expect(() => parseModelsFile("ok-model\nnot a model\n")).toThrow(/line 2: "not a model"/);
  });

  it("reads a --catalogue file: flat ids and base models whose variants join the three views", () => {
    const file = parseCatalogueFile(
      JSON.stringify({
        models: ["acme-flat", { id: "acme-2", parameters: [{ id: "turbo", values: ["false", "true"] }] }],
      }),
    );
    expect(file.ids).toEqual(["acme-flat"]);
    const catalogue = createModelCatalogue(file.ids, file.bases);
    const ids = catalogue.usable().map((m) => m.modelId);
    expect(ids).toEqual(expect.arrayContaining(["acme-flat", "acme-2", "acme-2-turbo"]));
    const item = catalogue.listItems().find((i) => i.id === "acme-2");
    expect(item?.variants?.map((v) => v.params)).toEqual([
      [{ id: "turbo", value: "false" }],
      [{ id: "turbo", value: "true" }],
    ]);
    expect(item?.variants?.find((v) => v.isDefault)?.params).toEqual([{ id: "turbo", value: "false" }]);
  });

  it("refuses a --catalogue file it cannot serve, naming the entry", () => {
    expect(() => parseCatalogueFile("nope")).toThrow(/not JSON/);
    expect(() => parseCatalogueFile("{}")).toThrow(/"models"/);
    expect(() => parseCatalogueFile('{"models":["bad id"]}')).toThrow(/models\[0\]/);
    expect(() => parseCatalogueFile('{"models":[{"id":"x","parameters":[]}]}')).toThrow(/at least one/);
    expect(() =>
      parseCatalogueFile(
        '{"models":[{"id":"x","parameters":[{"id":"effort","values":["low"]}],"defaults":{"effort":"max"}}]}',
      ),
    ).toThrow(/default effort must be one of low/);
  });
});
