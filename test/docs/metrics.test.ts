/**
 * docs/team.md's table of metrics is what `/metrics` exposes: every family the registry writes has a row with its
 * type (Node's process metrics as the two wildcard rows), every row names a family that exists, and the label values
 * the page lists for `route` and `type` are the tally's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createGatewayMetrics } from "../../src/gateway/metrics/gateway-metrics.js";
import { ROUTES, TOKEN_TYPES } from "../../src/gateway/metrics/request-tally.js";
import { createLogger } from "../../src/util/logger.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const page = readFileSync(join(ROOT, "docs", "team.md"), "utf8");

/** The rows of the table under "## Metrics": each metric name of the first cell with the row's cells. */
function documentedRows(): Array<{ name: string; type: string; what: string }> {
  const section = page.slice(page.indexOf("## Metrics"));
  const rows: Array<{ name: string; type: string; what: string }> = [];
  for (const line of section.split("\n").slice(1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("| `")) continue;
    const [first = "", type = "", , what = ""] = line.slice(2, -2).split(" | ");
    for (const match of first.matchAll(/`([a-z_*]+)`/g)) rows.push({ name: match[1] ?? "", type: type.trim(), what });
  }
  return rows;
}

/** Every metric family of a scrape with its type. */
async function exposedFamilies(): Promise<Map<string, string>> {
  const metrics = createGatewayMetrics({
    parkedCount: () => 0,
    spend: { snapshot: async () => [{ keyName: "alice", spendUsd: 1, budgetUsd: 5 }] },
    logger: createLogger({ level: "silent" }),
  });
  const text = await metrics.exposition();
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1] ?? "", match[2] ?? ""]));
}

describe("docs/team.md's metrics", () => {
  it("has a row, with its type, for every family /metrics exposes, and none for one it does not", async () => {
    const rows = documentedRows();
    const families = await exposedFamilies();
    expect(families.size).toBeGreaterThan(15);
    const wildcards = rows.filter((row) => row.name.endsWith("*")).map((row) => row.name.slice(0, -1));
    const exact = new Map(rows.filter((row) => !row.name.endsWith("*")).map((row) => [row.name, row.type]));
    const undocumented = [...families.keys()].filter(
      (name) => !exact.has(name) && !wildcards.some((prefix) => name.startsWith(prefix)),
    );
    expect(undocumented).toEqual([]);
    for (const [name, type] of exact) {
      expect(families.get(name), `${name} is exposed`).toBeDefined();
      expect(type, `${name}'s type`).toBe(families.get(name));
    }
    for (const prefix of wildcards) {
      expect(
        [...families.keys()].some((name) => name.startsWith(prefix)),
        `some ${prefix}* family`,
      ).toBe(true);
    }
  });

  it("lists the routes and token types the counters use", () => {
    const rows = documentedRows();
    const quoted = (what: string) => [...what.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]);
    expect(quoted(rows.find((row) => row.name === "cursor_bridge_upstream_runs_total")?.what ?? "")).toEqual([
      ...ROUTES,
    ]);
    const tokenTypes = quoted(rows.find((row) => row.name === "cursor_bridge_tokens_total")?.what ?? "");
    expect(new Set(tokenTypes)).toEqual(new Set(["type", ...TOKEN_TYPES]));
  });
});
