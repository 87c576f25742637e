import { describe, expect, it } from "vitest";
import type { ModelInfo } from "../../backend/types.js";
import {
  applyConfigOption,
  buildConfigOptions,
  CONFIG_OPTIONS,
  type ConfigOptionDefinition,
  selectOption,
} from "./config-options.js";
import type { AcpSessionRecord } from "./session-store.js";

const model = (id: string, reasoning: boolean): ModelInfo => ({
  id,
  displayName: id.toUpperCase(),
  aliases: [],
  reasoning,
  maxMode: false,
  vision: false,
});
const context = { models: [model("thinker", true), model("plain", false)] };

function record(): AcpSessionRecord {
  return {
    id: "s",
    cwd: "/w",
    mode: "agent",
    model: "thinker",
    config: {},
    messages: [],
    transcript: [],
    updatedAt: 0,
  };
}

/** An option that only a reasoning model offers, as an added option would be. */
const effort = selectOption({
  id: "effort",
  name: "Effort",
  category: "thought_level",
  dependsOnModel: true,
  values: (r, c) =>
    c.models.find((m) => m.id === r.model)?.reasoning === true
      ? [
          { value: "low", name: "Low" },
          { value: "high", name: "High" },
        ]
      : undefined,
  fallback: () => "low",
});
/** Mode and model plus the example option (the catalogue's own effort option is replaced by it). */
const withEffort: ConfigOptionDefinition[] = [
  ...CONFIG_OPTIONS.filter((o) => o.id === "mode" || o.id === "model"),
  effort,
];

describe("ACP config options", () => {
  it("builds mode and model, and an added option only where it applies", () => {
    const r = record();
    expect(buildConfigOptions(r, context).map((o) => o.id)).toEqual(["mode", "model"]);
    expect(buildConfigOptions(r, context, withEffort).find((o) => o.id === "effort")).toMatchObject({
      currentValue: "low",
    });
    r.model = "plain";
    expect(buildConfigOptions(r, context, withEffort).map((o) => o.id)).toEqual(["mode", "model"]);
  });

  it("refuses unknown options and values with invalid params", () => {
    const r = record();
    expect(() => applyConfigOption(r, "nope", "x", context)).toThrow(/Unknown configuration option/);
    expect(() => applyConfigOption(r, "mode", "yolo", context)).toThrow(/Unknown mode/);
    expect(() => applyConfigOption(r, "model", "gpt-0", context)).toThrow(/no model/);
    expect(() => applyConfigOption(r, "effort", "max", context, withEffort)).toThrow(/no value max/);
  });

  it("rebuilds the options that depend on the model when it changes", () => {
    const r = record();
    applyConfigOption(r, "effort", "high", context, withEffort);
    expect(r.config).toEqual({ effort: "high" });
    applyConfigOption(r, "mode", "plan", context, withEffort);
    expect(r.config).toEqual({ effort: "high" });
    applyConfigOption(r, "model", "plain", context, withEffort);
    expect(r.config).toEqual({});
    expect(buildConfigOptions(r, context, withEffort).some((o) => o.id === "effort")).toBe(false);
  });
});
