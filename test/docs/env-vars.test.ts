/**
 * Every environment variable cursor-bridge reads is in docs/commands.md: each setting's (the settings table that
 * `serve --help` prints) as a row of the "Environment variables" table with its flag, config-file key, default and
 * description, and every other `CURSOR_BRIDGE_*` name the code or bin/ reads.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { serveCommand } from "../../src/cli/serve.js";
import { CONFIG_FILE_SETTING, SETTINGS } from "../../src/config/settings.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const page = readFileSync(join(ROOT, "docs", "commands.md"), "utf8");

/** The rows of the table under the "Environment variables" heading, by their first cell. */
function envRows(): Map<string, string[]> {
  const start = page.indexOf("### Environment variables");
  expect(start, "docs/commands.md has an Environment variables section").toBeGreaterThan(0);
  const rows = new Map<string, string[]>();
  for (const line of page.slice(start).split("\n")) {
    if (line.startsWith("#") && !line.startsWith("### Environment variables")) break;
    const cells = line.startsWith("| `") ? line.split(" | ").map((cell) => cell.replace(/^\| |\s\|$/g, "")) : [];
    if (cells[0] !== undefined) rows.set(cells[0], cells);
  }
  return rows;
}

/** Source files under `dir` (recursively), tests aside. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs)$/.test(entry.name) && !entry.name.includes(".test."))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("the environment variables in docs/commands.md", () => {
  it("lists every setting's variable with its flag and config-file key", () => {
    const rows = envRows();
    const settings = [{ ...CONFIG_FILE_SETTING, secret: true }, ...SETTINGS];
    expect(settings.length).toBeGreaterThan(30);
    for (const setting of settings) {
      if (setting.env === undefined) continue;
      const row = rows.get(`\`${setting.env}\``);
      expect(row, `${setting.env} is missing from the table`).toBeDefined();
      expect(row?.[1], `${setting.env}'s flag`).toBe(setting.flag === undefined ? "—" : `\`${setting.flag}\``);
      const key = row?.[2] ?? "";
      if (setting.secret && setting.name !== "adminKey") expect(key, `${setting.env} has no config key`).toBe("—");
      else expect(key.startsWith(`\`${setting.name}\``), `${setting.env}'s config key ${setting.name}`).toBe(true);
      // The default and the description as `serve --help` prints them.
      const shown = setting.defaultText === "none" ? "none" : `\`${setting.defaultText}\``;
      expect(row?.[3], `${setting.env}'s default`).toBe(shown);
      expect(row?.[4]?.replaceAll("`", "").replaceAll("\\|", "|"), `${setting.env}'s description`).toBe(
        setting.description,
      );
    }
  });

  it("names every CURSOR_BRIDGE_* variable the code reads", () => {
    const names = new Set<string>();
    for (const file of [...sources("src"), ...sources("bin"), ...sources("tools")]) {
      for (const match of readFileSync(file, "utf8").matchAll(/\bCURSOR_BRIDGE_[A-Z][A-Z0-9_]*[A-Z0-9]\b/g)) {
        names.add(match[0]);
      }
    }
    expect(names.size).toBeGreaterThan(30);
    const missing = [...names].filter((name) => !page.includes(`\`${name}\``));
    expect(missing, "CURSOR_BRIDGE_* variables not in docs/commands.md").toEqual([]);
  });

  it("serve --help lists every setting, the config-file-only ones too, and every endpoint", () => {
    const help = serveCommand.help;
    for (const setting of SETTINGS) {
      const shown = setting.flag ?? setting.env ?? `${setting.name} (config file only)`;
      expect(help, setting.name).toContain(shown);
    }
    for (const path of ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/models", "/health", "/metrics"]) {
      expect(help).toContain(path);
    }
    expect(help).toContain("/admin");
  });
});
