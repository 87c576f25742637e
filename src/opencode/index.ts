/**
 * cursor-bridge as an OpenCode plugin: `"plugin": ["cursor-bridge"]` in opencode.json (or the absolute
 * `file://` path of this file in a clone). OpenCode calls every export of a plugin module, so this module exports
 * the plugin function and nothing else. It runs inside OpenCode's Bun runtime and starts the bridge itself under
 * Node (see child.ts).
 */
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";
import { createCursorPlugin } from "./plugin.js";
import type { Plugin } from "./types.js";

/** The plugin OpenCode loads. */
export const CursorBridgePlugin: Plugin = (input) => {
  const env = process.env;
  const home = process.platform === "win32" ? env.USERPROFILE : env.HOME;
  return createCursorPlugin({
    env,
    paths: { env, platform: process.platform, homedir: home !== undefined && home !== "" ? home : homedir() },
    binPath: fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url)),
  })(input);
};
