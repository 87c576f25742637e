/**
 * How a Cursor exec looks in the editor: the ACP tool kind, a title and the locations of a `tool_call`.
 */

import { isAbsolute, resolve } from "node:path";
import type { ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { SurfaceExec } from "../../backend/types.js";

/** Title, kind and locations of one exec. */
export interface ToolDisplay {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
}

/** An exec path made absolute against the session's folder (ACP paths are absolute). */
export function absolutePath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** The display of one exec. */
export function displayOf(exec: SurfaceExec, cwd: string): ToolDisplay {
  const at = (path: string) => [{ path: absolutePath(cwd, path) }];
  switch (exec.kind) {
    case "read":
      return { title: `Read ${exec.path}`, kind: "read", locations: at(exec.path) };
    case "write":
      return { title: `Write ${exec.path}`, kind: "edit", locations: at(exec.path) };
    case "delete":
      return { title: `Delete ${exec.path}`, kind: "delete", locations: at(exec.path) };
    case "shell":
      return { title: exec.command, kind: "execute", locations: [] };
    case "ls":
      return { title: `List ${exec.path}`, kind: "search", locations: at(exec.path) };
    case "grep":
      return { title: `Grep ${exec.pattern}`, kind: "search", locations: exec.path === undefined ? [] : at(exec.path) };
    case "glob":
      return { title: `Find ${exec.pattern}`, kind: "search", locations: exec.path === undefined ? [] : at(exec.path) };
    case "fetch":
      return { title: `Fetch ${exec.url}`, kind: "fetch", locations: [] };
    case "mcp":
      return { title: exec.toolName, kind: "other", locations: [] };
  }
}
