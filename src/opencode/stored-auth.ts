/**
 * Reads the `cursor` credential OpenCode stores, for the moments when OpenCode has not handed it to the plugin (the
 * `config` hook runs before `auth.loader`): `OPENCODE_AUTH_CONTENT` when set, else OpenCode's `auth.json` under
 * `$XDG_DATA_HOME/opencode` (default `~/.local/share/opencode`). Only ever read, never written: writes go through
 * `client.auth.set`.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { PathEnvironment } from "../util/paths.js";
import type { OpenCodeAuth } from "./types.js";

/** OpenCode's auth.json. */
export function openCodeAuthFile(paths: PathEnvironment): string {
  const xdg = paths.env.XDG_DATA_HOME;
  const base = xdg?.startsWith("/") ? xdg : join(paths.homedir, ".local", "share");
  return join(base, "opencode", "auth.json");
}

/** A well-formed credential record, or undefined. */
export function parseAuth(value: unknown): OpenCodeAuth | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.type === "api" && typeof v.key === "string" && v.key !== "") return { type: "api", key: v.key };
  if (
    v.type === "oauth" &&
    typeof v.refresh === "string" &&
    typeof v.access === "string" &&
    typeof v.expires === "number"
  ) {
    return { type: "oauth", refresh: v.refresh, access: v.access, expires: v.expires };
  }
  return undefined;
}

function entryOf(text: string, providerId: string): OpenCodeAuth | undefined {
  try {
    const all: unknown = JSON.parse(text);
    return typeof all === "object" && all !== null
      ? parseAuth((all as Record<string, unknown>)[providerId])
      : undefined;
  } catch {
    return undefined;
  }
}

/** The stored credential of `providerId`, or undefined when there is none (or it cannot be read). */
export async function readStoredAuth(paths: PathEnvironment, providerId: string): Promise<OpenCodeAuth | undefined> {
  const content = paths.env.OPENCODE_AUTH_CONTENT;
  if (content !== undefined && content !== "") return entryOf(content, providerId);
  try {
    return entryOf(await readFile(openCodeAuthFile(paths), "utf8"), providerId);
  } catch {
    return undefined;
  }
}
