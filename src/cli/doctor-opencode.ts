/**
 * `doctor`'s check of the OpenCode plugin entries naming cursor-bridge in the global opencode.json. OpenCode reports a
 * plugin it cannot load only as "Provider not found: cursor" or "Unexpected server error", so this names the cause: a
 * bare `cursor-bridge` (no such package is published) or a `file://` path that no longer holds cursor-bridge.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { CheckResult } from "./doctor-checks.js";
import { isOurPluginEntry, openCodePath, PROVIDER_ID, type SetupPaths } from "./setup-clients.js";
import { stripJsonComments } from "./setup-write.js";
import { packageRoot } from "./version.js";

const FIX = "Run `cursor-bridge setup opencode-plugin --write`: it writes this installation's path in place of it.";

/** Whether `url` is the root of a cursor-bridge package (its package.json and the plugin's entry are there). */
function holdsCursorBridge(url: string): boolean {
  try {
    const root = fileURLToPath(url);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: unknown };
    return pkg.name === PROVIDER_ID && existsSync(join(root, "src", "opencode", "index.ts"));
  } catch {
    return false;
  }
}

/** The plugin entries of opencode.json that name cursor-bridge, checked. */
export function checkOpenCodePlugin(paths: SetupPaths): CheckResult {
  const base = { id: "opencode-plugin", title: "OpenCode plugin" };
  const file = openCodePath(paths);
  let plugins: unknown[];
  try {
    const config = JSON.parse(stripJsonComments(readFileSync(file, "utf8"))) as { plugin?: unknown };
    plugins = Array.isArray(config.plugin) ? config.plugin : [];
  } catch {
    return { ...base, status: "skip", detail: `no readable ${file}` };
  }
  const self = pathToFileURL(packageRoot()).href;
  const ours = plugins.filter((entry): entry is string => isOurPluginEntry(entry, self));
  if (ours.length === 0) return { ...base, status: "skip", detail: `${file} names no cursor-bridge plugin` };
  for (const entry of ours) {
    if (entry === PROVIDER_ID) {
      const detail = `${file}: "${entry}" is no published package, so OpenCode cannot load it ("Provider not found: cursor")`;
      return { ...base, status: "fail", detail, fix: FIX };
    }
    if (entry.startsWith("file:") && !holdsCursorBridge(entry)) {
      const detail = `${file}: ${entry} holds no cursor-bridge (moved or deleted?), so OpenCode cannot load the plugin`;
      return { ...base, status: "fail", detail, fix: FIX };
    }
  }
  return { ...base, status: "ok", detail: `${ours.join(", ")} (in ${file})` };
}
