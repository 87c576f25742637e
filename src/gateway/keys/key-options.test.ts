import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { newKey } from "./key-material.js";
import { parseBudget, parseDuration, parseKeySettings, parseModels } from "./key-options.js";
import { principalOf } from "./principal.js";

function refusal(work: () => unknown): ProxyError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ProxyError);
    return error as ProxyError;
  }
  throw new Error("expected a refusal");
}

describe("key settings as people write them", () => {
  it("budgets: USD/PERIOD with day, week or month", () => {
    expect(parseBudget("10/month")).toEqual({ usd: 10, period: "month" });
    expect(parseBudget("$2.50 / day")).toEqual({ usd: 2.5, period: "day" });
    for (const bad of ["10", "10/mnth", "0/day", "-1/day", "ten/week", "10/month/2"]) {
      const error = refusal(() => parseBudget(bad));
      expect(error.code).toBe("invalid_request");
      expect(error.param).toBe("budget");
      expect(error.message).toContain("expected USD/PERIOD");
    }
  });

  it("durations: a number and m, h, d or w", () => {
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("12h")).toBe(12 * 3_600_000);
    expect(parseDuration("30d")).toBe(30 * 86_400_000);
    expect(parseDuration("2w")).toBe(14 * 86_400_000);
    for (const bad of ["30", "30days", "0d", "1y", "-2h", "999999w"]) {
      expect(refusal(() => parseDuration(bad)).message).toContain("expected a number and a unit");
    }
  });

  it("models: comma-separated ids or globs, deduplicated; names and counts are checked", () => {
    expect(parseModels("gpt-5*, claude-4.5-sonnet,gpt-5*")).toEqual(["gpt-5*", "claude-4.5-sonnet"]);
    expect(refusal(() => parseModels(" , ")).param).toBe("models");
    expect(refusal(() => parseKeySettings({ name: "has space" })).param).toBe("name");
    expect(refusal(() => parseKeySettings({ name: "vk_0123456789abcdef" })).param).toBe("name");
    expect(refusal(() => parseKeySettings({ name: "a", rpm: "1.5" })).param).toBe("rpm");
    expect(parseKeySettings({ name: "a", rpm: 5, maxParallel: "2" }).limits).toEqual({ rpm: 5, maxParallel: 2 });
  });

  it("a key is cbk- and 43 URL-safe characters, different every time", () => {
    const keys = new Set(Array.from({ length: 50 }, () => newKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(/^cbk-[A-Za-z0-9_-]{43}$/);
  });
});

describe("the principal of a key", () => {
  const record = {
    id: "vk_1",
    name: "alice",
    hash: "h",
    prefix: "cbk-abcdef",
    createdAt: "t",
    account: "team",
    models: ["gpt-5*", "fast"],
    limits: { rpm: 3 },
  };

  it("carries id, name, account and limits; allows a model matching by requested or resolved id", () => {
    const principal = principalOf(record);
    expect(principal).toMatchObject({ keyId: "vk_1", keyName: "alice", account: "team", limits: { rpm: 3 } });
    expect(() => principal.checkModel("GPT-5.2", "gpt-5.2")).not.toThrow();
    expect(() => principal.checkModel("fast", "composer-1")).not.toThrow();
    expect(() => principal.checkModel("my-alias", "gpt-5.2-high")).not.toThrow();
  });

  it("refuses another model with 403 permission_denied naming it (and what it resolved to)", () => {
    const error = refusal(() => principalOf(record).checkModel("sonnet", "claude-4.6-sonnet-medium"));
    expect(error.status).toBe(403);
    expect(error.code).toBe("permission_denied");
    expect(error.param).toBe("model");
    expect(error.message).toContain("`sonnet` (claude-4.6-sonnet-medium)");
    expect(error.message).toContain("gpt-5*, fast");
  });

  it("a key without a model list may use every model", () => {
    expect(() => principalOf({ ...record, models: undefined }).checkModel("x", "y")).not.toThrow();
  });
});
