/**
 * Writing a client's configuration file for `setup --write`: read what is there, merge, keep a backup of the old
 * file next to it, write the new one atomically (temporary file + rename, the old file's mode kept), and report the
 * diff. JSON files are merged as data; a JSON-with-comments file is refused rather than stripped of its comments.
 */
import { copyFile, readFile, realpath, rename, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { makeDir } from "../util/make-dir.js";
import { unifiedDiff } from "./text-diff.js";
import { MergeRefused } from "./toml-merge.js";

/** What {@link writeMergedFile} did. */
export interface WriteResult {
  path: string;
  changed: boolean;
  created: boolean;
  /** Where the previous content was copied, when there was any and it changed. */
  backup: string | undefined;
  diff: string;
}

/** Removes `//` and `/* *\/` comments and trailing commas outside strings (to recognise JSONC, never to write it). */
export function stripJsonComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end + 1;
    } else if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (text.startsWith("/*", i)) {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += char;
      i++;
    }
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

/**
 * Parses a JSON config file into an object.
 * @throws MergeRefused for JSONC (comments, trailing commas), invalid JSON, or a top level that is not an object.
 */
export function parseJsonObject(text: string, path: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    let jsonc = false;
    try {
      JSON.parse(stripJsonComments(text));
      jsonc = true;
    } catch {
      // neither JSON nor JSONC
    }
    throw new MergeRefused(
      jsonc
        ? `${path} has comments or trailing commas (JSONC); rewriting it would drop them, so it is left alone. ` +
            "Add the configuration shown above by hand, or remove the comments and run this again."
        : `${path} is not valid JSON; fix it or move it away, then run this again.`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new MergeRefused(`${path} does not hold a JSON object; fix it or move it away, then run this again.`);
  }
  return value as Record<string, unknown>;
}

/** `2026-11-23T13:05:09.123Z` → `20261123-130509`. */
function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[-:]/g, "").replace("T", "-").replace(/\..*$/, "");
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Merges into `path` with `merge(existing)` (undefined when there is no file), backing up a changed file first.
 * @throws MergeRefused from `merge`; nothing is written then.
 */
export async function writeMergedFile(
  shownPath: string,
  merge: (existing: string | undefined) => string,
  now: number,
): Promise<WriteResult> {
  // A symlinked config (dotfile managers) is written through to its target, so the link stays a link.
  const path = await realpath(shownPath).catch(() => shownPath);
  const existing = await readIfPresent(path);
  const next = merge(existing);
  const diff = unifiedDiff(existing ?? "", next, path);
  if (existing === next) return { path, changed: false, created: false, backup: undefined, diff };
  let mode = 0o644;
  let backup: string | undefined;
  if (existing !== undefined) {
    mode = (await stat(path)).mode & 0o777;
    backup = `${path}.cursor-bridge-${stamp(now)}.bak`;
    await copyFile(path, backup);
  } else {
    await makeDir(dirname(path), 0o777);
  }
  const temporary = `${path}.cursor-bridge-${process.pid}.tmp`;
  await writeFile(temporary, next, { mode });
  await rename(temporary, path);
  return { path, changed: true, created: existing === undefined, backup, diff };
}
