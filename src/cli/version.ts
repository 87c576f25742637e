import { existsSync, readFileSync } from "node:fs";

let cached: string | undefined;

/**
 * The package version, read once from cursor-bridge's package.json: the nearest one above this module, which runs
 * from src/cli/ (tests, tsx) or from a bundle in dist/.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  for (let up = "../"; up.length < 30; up += "../") {
    const file = new URL(`${up}package.json`, import.meta.url);
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version: string };
    if (pkg.name === "cursor-bridge") {
      cached = pkg.version;
      return cached;
    }
  }
  throw new Error("cursor-bridge's package.json was not found above src/cli/version.ts");
}
