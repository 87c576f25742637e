import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

let cached: { version: string; root: string } | undefined;

/**
 * cursor-bridge's package.json, read once: the nearest one above this module, which runs from src/cli/ (tests, tsx)
 * or from a bundle in dist/.
 */
function findPackage(): { version: string; root: string } {
  if (cached !== undefined) return cached;
  for (let up = "../"; up.length < 30; up += "../") {
    const file = new URL(`${up}package.json`, import.meta.url);
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version: string };
    if (pkg.name === "cursor-bridge") {
      cached = { version: pkg.version, root: fileURLToPath(new URL(up, import.meta.url)).replace(/[\\/]$/, "") };
      return cached;
    }
  }
  throw new Error("cursor-bridge's package.json was not found above src/cli/version.ts");
}

/** The package version. */
export function packageVersion(): string {
  return findPackage().version;
}

/** The absolute path of this installation's package root (a clone, or where npm installed it). */
export function packageRoot(): string {
  return findPackage().root;
}
