/**
 * A deliberately small TOML editor for `setup codex --write`: it replaces whole tables cursor-bridge owns
 * (`[model_providers.cursor-bridge]`, `[profiles.cursor-bridge]` and their sub-tables) and sets a few top-level keys,
 * leaving every other line of the user's file byte for byte as it was (comments and formatting included). It is not a
 * TOML parser: it scans lines, tracking multi-line strings and brackets so a `[` inside a string or a multi-line array
 * is never taken for a table header, and refuses ({@link MergeRefused} naming the line) when the file defines an owned table
 * in a form it does not rewrite (an inline table, dotted keys), rather than produce a file Codex would reject.
 */

/** The file cannot be merged without losing or breaking something; the message says what and where. */
export class MergeRefused extends Error {
  override name = "MergeRefused";
}

/** A table header's dotted key as segments, e.g. `[model_providers."cursor-bridge"]` → ["model_providers", "cursor-bridge"]. */
export type KeyPath = readonly string[];

/** One scanned line. */
interface Line {
  text: string;
  /** Set on a table header line (`[a.b]` or `[[a.b]]`). */
  header?: { path: string[]; array: boolean };
  /** Set on a line that starts a `key = value` pair (not inside a multi-line value). */
  key?: string[];
  /** True when this line starts a value that continues on later lines (multi-line string or array). */
  continues?: boolean;
}

const BARE = /^[A-Za-z0-9_-]+/;

/** Parses a dotted key (`a."b.c".'d'`); undefined when it is not one. */
export function parseDottedKey(text: string): string[] | undefined {
  const parts: string[] = [];
  let rest = text.trim();
  for (;;) {
    let segment: string;
    if (rest.startsWith('"')) {
      const match = rest.match(/^"((?:[^"\\]|\\.)*)"/);
      if (!match) return undefined;
      segment = (match[1] ?? "").replace(/\\(["\\])/g, "$1");
      rest = rest.slice(match[0].length);
    } else if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      if (end < 0) return undefined;
      segment = rest.slice(1, end);
      rest = rest.slice(end + 1);
    } else {
      const match = rest.match(BARE);
      if (!match) return undefined;
      segment = match[0];
      rest = rest.slice(segment.length);
    }
    parts.push(segment);
    rest = rest.trimStart();
    if (rest === "") return parts;
    if (!rest.startsWith(".")) return undefined;
    rest = rest.slice(1).trimStart();
  }
}

/**
 * Counts bracket depth changes on a value fragment outside strings and comments, and tells whether it leaves a
 * multi-line string open.
 */
function scanValue(text: string, open: '"""' | "'''" | undefined): { depth: number; open: '"""' | "'''" | undefined } {
  let depth = 0;
  let i = 0;
  let inside = open;
  while (i < text.length) {
    if (inside !== undefined) {
      if (inside === '"""' && text[i] === "\\") {
        i += 2;
        continue;
      }
      if (text.startsWith(inside, i)) {
        const quote = inside[0];
        inside = undefined;
        i += 3;
        // Up to two more quotes right after the delimiter belong to the string (`""""` ends with one quote in it).
        for (let extra = 0; extra < 2 && text[i] === quote; extra++) i++;
        continue;
      }
      i++;
      continue;
    }
    const char = text[i];
    if (char === "#") break;
    if (text.startsWith('"""', i) || text.startsWith("'''", i)) {
      inside = text.slice(i, i + 3) as '"""' | "'''";
      i += 3;
      continue;
    }
    if (char === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
      continue;
    }
    if (char === "'") {
      const end = text.indexOf("'", i + 1);
      i = end < 0 ? text.length : end + 1;
      continue;
    }
    if (char === "[" || char === "{") depth++;
    if (char === "]" || char === "}") depth--;
    i++;
  }
  return { depth, open: inside };
}

/** Splits a TOML document into lines and marks headers and key lines. */
export function scanToml(source: string): Line[] {
  const lines: Line[] = [];
  let depth = 0;
  let open: '"""' | "'''" | undefined;
  for (const text of source.split("\n")) {
    const line: Line = { text };
    if (open === undefined && depth === 0) {
      const header = text.match(/^\s*(\[\[?)\s*([^\]]*?)\s*(\]\]?)\s*(#.*)?$/);
      const path = header ? parseDottedKey(header[2] ?? "") : undefined;
      if (header && path && (header[1] === "[[") === (header[3] === "]]")) {
        line.header = { path, array: header[1] === "[[" };
        lines.push(line);
        continue;
      }
      const eq = findKeyEnd(text);
      if (eq !== undefined) {
        const key = parseDottedKey(text.slice(0, eq));
        if (key) line.key = key;
        const value = scanValue(text.slice(eq + 1), undefined);
        depth = Math.max(0, value.depth);
        open = value.open;
        line.continues = depth > 0 || open !== undefined;
      }
    } else {
      const value = scanValue(text, open);
      depth = Math.max(0, depth + value.depth);
      open = value.open;
    }
    lines.push(line);
  }
  return lines;
}

/** Index of the `=` ending a key at the start of `text` (quotes respected); undefined for other lines. */
function findKeyEnd(text: string): number | undefined {
  if (/^\s*(#.*)?$/.test(text)) return undefined;
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === "=") return i;
    if (char === "#") return undefined;
    if (char === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return undefined;
      i = end;
    }
    i++;
  }
  return undefined;
}

const startsWith = (path: readonly string[], prefix: readonly string[]) =>
  prefix.length <= path.length && prefix.every((segment, i) => path[i] === segment);

/** A TOML string literal for a plain value. */
export function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** What {@link mergeToml} writes. */
export interface TomlEdit {
  /** Top-level keys to set (replacing a single-line value, or added before the first table). */
  rootKeys: ReadonlyArray<readonly [key: string, value: string]>;
  /** Tables cursor-bridge owns: each replaces any existing table at that path (and its sub-tables). */
  tables: ReadonlyArray<{ path: KeyPath; body: ReadonlyArray<readonly [key: string, value: string]> }>;
  /** A comment line written above each owned table. */
  marker: string;
}

function refuse(lineNumber: number, what: string): never {
  throw new MergeRefused(
    `line ${lineNumber} ${what}, which this command does not rewrite; remove it (or edit the file by hand) and run ` +
      "it again.",
  );
}

/** Applies `edit` to `source` (a TOML document, possibly empty); returns the new document. */
export function mergeToml(source: string, edit: TomlEdit): string {
  const lines = scanToml(source.replace(/\r\n/g, "\n"));
  const owned = edit.tables.map((table) => table.path);
  const firstHeader = lines.findIndex((line) => line.header !== undefined);
  const rootEnd = firstHeader < 0 ? lines.length : firstHeader;

  // Refuse owned tables defined as inline tables or dotted keys, anywhere.
  let table: string[] = [];
  lines.forEach((line, index) => {
    if (line.header) {
      table = line.header.path;
      if (line.header.array && owned.some((path) => startsWith(line.header?.path ?? [], path))) {
        refuse(index + 1, `makes ${line.header.path.join(".")} an array of tables`);
      }
      return;
    }
    if (!line.key || owned.some((path) => startsWith(table, path))) return; // inside an owned table: replaced
    const full = [...table, ...line.key];
    // `cursor-bridge.base_url = …` under [model_providers], or `model_providers = { … }` defining the parent inline.
    if (owned.some((path) => startsWith(full, path) || startsWith(path, full))) {
      refuse(index + 1, `defines ${full.join(".")} as a key`);
    }
  });

  const keep: string[] = [];
  let dropping = false;
  let rootEndInKeep: number | undefined;
  lines.forEach((line, index) => {
    if (line.header) {
      dropping = owned.some((path) => startsWith(line.header?.path ?? [], path));
      // The marker comment written above an owned table goes with it.
      if (dropping && keep.at(-1) === edit.marker) keep.pop();
    }
    if (index === rootEnd) rootEndInKeep = keep.length;
    if (dropping) return;
    if (index < rootEnd && line.key && line.key.length === 1) {
      const replacement = edit.rootKeys.find(([key]) => key === line.key?.[0]);
      if (replacement) {
        if (line.continues) refuse(index + 1, `gives ${replacement[0]} a multi-line value`);
        keep.push(`${replacement[0]} = ${replacement[1]}`);
        return;
      }
    }
    keep.push(line.text);
  });

  const present = new Set(
    lines.slice(0, rootEnd).flatMap((line) => (line.key?.length === 1 ? [line.key[0] ?? ""] : [])),
  );
  const added = edit.rootKeys.filter(([key]) => !present.has(key)).map(([key, value]) => `${key} = ${value}`);
  if (added.length > 0) {
    // After the last non-blank line of the root region (before the first table).
    let at = rootEndInKeep ?? keep.length;
    while (at > 0 && keep[at - 1]?.trim() === "") at--;
    const blankAfter = at < keep.length && keep[at]?.trim() !== "" ? [""] : [];
    keep.splice(at, 0, ...added, ...blankAfter);
  }

  while (keep.length > 0 && keep[keep.length - 1]?.trim() === "") keep.pop();
  for (const owned of edit.tables) {
    if (keep.length > 0) keep.push("");
    keep.push(edit.marker, `[${owned.path.map(headerSegment).join(".")}]`);
    for (const [key, value] of owned.body) keep.push(`${key} = ${value}`);
  }
  return `${keep.join("\n")}\n`;
}

function headerSegment(segment: string): string {
  return BARE.test(segment) && segment.match(BARE)?.[0] === segment ? segment : tomlString(segment);
}

/** The value of a top-level single-line string key (`model_provider = "x"`), when the document has one. */
export function rootStringValue(source: string, key: string): string | undefined {
  const lines = scanToml(source.replace(/\r\n/g, "\n"));
  for (const line of lines) {
    if (line.header) return undefined;
    if (line.key?.length === 1 && line.key[0] === key) {
      const value = line.text.slice((findKeyEnd(line.text) ?? 0) + 1).trim();
      const match = value.match(/^"((?:[^"\\]|\\.)*)"|^'([^']*)'/);
      if (!match) return undefined;
      return match[2] ?? JSON.parse(`"${match[1] ?? ""}"`);
    }
  }
  return undefined;
}
