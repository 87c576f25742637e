/**
 * Whether dist/ is current with src/: what bin/cursor-bridge.js asks before every start, so it is kept small (no
 * other module to load: tools/build.mjs, which builds, loads only when dist/ is stale) and cheap (one readdir per
 * folder and one stat per file, paths joined by hand: path.join costs more than the stat). An installed package
 * (one that lives in a node_modules folder: npm's global folder, npx's cache, a project's dependencies) runs its dist/
 * as shipped and walks nothing: its src/ is there for the OpenCode plugin, not to be edited and rebuilt.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
export const srcDir = `${root}src`;
export const distDir = `${root}dist`;
/** Written last by a successful build; its mtime is the moment the build read its sources. */
export const stampFile = `${distDir}${sep}.build-stamp`;
/**
 * The package was installed, not cloned: npm puts every installed package in a node_modules folder. A clone linked
 * with `npm install -g .` is not, since Node runs a linked bin from its real path (the clone).
 */
export const installed = root.includes(`${sep}node_modules${sep}`);
/** The build scripts: a newer one makes dist/ stale too. */
const buildScripts = [
  "build.mjs",
  "token-ranks.mjs",
  "precompiled-descriptors.mjs",
  "descriptor-json.mjs",
  "descriptor-proto-schema.mjs",
  "json-file-desc.mjs",
  "lazy-descriptors.mjs",
  "merge-chunks.mjs",
  "script-chunks.mjs",
  "script-loader.mjs",
].map((script) => `${root}tools${sep}${script}`);

/** Newest mtime (ms) among the sources that go into dist/: src/ files and folders (deletions touch the folder). */
export function newestSourceMtime() {
  let newest = Math.max(...buildScripts.map((script) => statSync(script).mtimeMs));
  const walk = (dir) => {
    const own = statSync(dir).mtimeMs;
    if (own > newest) newest = own;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = `${dir}${sep}${entry.name}`;
      if (entry.isDirectory()) walk(full);
      else if (!entry.name.endsWith(".test.ts")) {
        const mtime = statSync(full).mtimeMs;
        if (mtime > newest) newest = mtime;
      }
    }
  };
  walk(srcDir);
  return newest;
}

/** Whether dist/ holds a build (a current one or not). */
export function distBuilt() {
  return (
    existsSync(stampFile) && existsSync(`${distDir}${sep}main.js`) && existsSync(`${distDir}${sep}o200k_base.tokens`)
  );
}

/**
 * Why dist/ must be (re)built, or undefined when it is current (or when there are no sources to build from, or the
 * package is installed and runs dist/ as shipped).
 */
export function staleReason() {
  if (!existsSync(srcDir)) return undefined;
  if (!distBuilt()) return "dist/ has not been built";
  if (installed) return undefined;
  return newestSourceMtime() > statSync(stampFile).mtimeMs ? "src/ changed since dist/ was built" : undefined;
}
