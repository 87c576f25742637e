/**
 * The execs the bridge runs itself for an ACP session: ls, grep and glob, read-only and only inside the session's
 * `cwd` (a path outside it is refused). Bounded walks: at most {@link MAX_ENTRIES} files are visited, dependency and
 * VCS folders are skipped, and files larger than {@link MAX_GREP_BYTES} are not searched. Grep patterns run on
 * RE2 (the `re2js` port: linear time in the text, the syntax of ripgrep's Rust regex), so no pattern can stall the
 * agent; a pattern RE2 refuses (backreferences, lookaround) is a grep error naming why, as ripgrep's would be. Glob
 * patterns (glob's pattern, grep's glob filter) are compiled to RE2 too, so no glob can stall it either.
 */
import { lstat, readdir, readFile, readlink, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

const MAX_ENTRIES = 5000;
const MAX_GREP_BYTES = 1024 * 1024;
const MAX_MATCHES = 500;
const SKIPPED = new Set([".git", "node_modules", ".hg", ".svn"]);

/** A path refused because it leaves the session's folder. */
export class OutsideCwdError extends Error {}

/**
 * `path` (absolute, or relative to `cwd`) resolved, refusing anything outside `cwd` (symbolic links followed). An
 * absolute path under `cwd` as the editor names it is taken under the folder's real path: an editor whose folder is
 * reached through a link (macOS's /tmp is /private/tmp) names its files through that link.
 */
export async function insideCwd(cwd: string, path: string | undefined): Promise<string> {
  const root = await realpath(cwd);
  const named = resolve(cwd);
  const wanted = resolve(named, path === undefined || path === "" ? "." : path);
  const underNamed = relative(named, wanted);
  const target = underNamed.startsWith("..") || isAbsolute(underNamed) ? wanted : join(root, underNamed);
  const real = await realpathOfNew(target);
  for (const candidate of [target, real]) {
    const rel = relative(root, candidate);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      throw new OutsideCwdError(`${path} is outside the session's folder ${cwd}; only paths inside it are searched.`);
    }
  }
  return real;
}

/** Where `path` (absolute) is, or would be once created, symbolic links followed; see {@link realpathOfNew}. */
export function landingPath(path: string): Promise<string> {
  return realpathOfNew(path);
}

/** Most symbolic links followed while resolving one path (as the system's own limit, ELOOP). */
const MAX_LINK_HOPS = 40;

/**
 * Where `target` (absolute) is, or would be once created, symbolic links followed: its deepest existing ancestor
 * resolved with realpath, then the rest of its names. A dangling link on the way is followed to where it points (a
 * write through it creates the file there). Judging a new file by its name alone would let `linkdir/new.txt`, with
 * `linkdir` a link to a folder elsewhere, pass for a file inside the session's folder.
 */
async function realpathOfNew(target: string): Promise<string> {
  let existing = target;
  let rest: string[] = [];
  for (let hops = 0; hops <= MAX_LINK_HOPS; ) {
    try {
      return join(await realpath(existing), ...rest);
    } catch {
      const link = await lstat(existing).catch(() => undefined);
      if (link?.isSymbolicLink() === true) {
        existing = resolve(dirname(existing), await readlink(existing));
        hops++;
        continue;
      }
      const parent = dirname(existing);
      if (parent === existing) return target;
      rest = [basename(existing), ...rest];
      existing = parent;
    }
  }
  throw new OutsideCwdError(`${target} goes through too many symbolic links.`);
}

/** Every file under `dir` (absolute paths), directories with a trailing `/`, bounded. */
async function walk(dir: string, withDirs: boolean): Promise<string[]> {
  const out: string[] = [];
  const queue = [dir];
  while (queue.length > 0 && out.length < MAX_ENTRIES) {
    const current = queue.shift() as string;
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (out.length >= MAX_ENTRIES) break;
      const full = join(current, entry.name);
      if (entry.isDirectory()) {
        if (SKIPPED.has(entry.name)) continue;
        if (withDirs) out.push(`${full}/`);
        queue.push(full);
      } else if (entry.isFile()) out.push(full);
    }
  }
  return out;
}

/** Lists a directory recursively: one absolute path per line (folders end in `/`). */
export async function listDirectory(cwd: string, path: string): Promise<string> {
  const dir = await insideCwd(cwd, path);
  const info = await stat(dir);
  if (!info.isDirectory()) throw new Error(`${path} is not a directory.`);
  return (await walk(dir, true)).join("\n");
}

/**
 * A glob pattern as RE2 regular-expression source over `/`-separated relative paths (`**`, `*`, `?`, `{a,b}` with
 * literal options; anything else, `[` included, is literal).
 */
export function globSource(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        const slash = pattern[i + 2] === "/";
        out += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "{") {
      const end = pattern.indexOf("}", i);
      if (end === -1) out += "\\{";
      else {
        const options = pattern.slice(i + 1, end).split(",");
        out += `(?:${options.map(escapeLiteral).join("|")})`;
        i = end;
      }
    } else out += escapeLiteral(c);
  }
  // A pattern without a folder matches the file name at any depth (as ripgrep's --glob does).
  return pattern.includes("/") ? `^${out}$` : `(?:^|/)${out}$`;
}

function escapeLiteral(text: string): string {
  return text.replace(/[.+^${}()|[\]\\*?]/g, "\\$&");
}

/**
 * A matcher for a glob pattern (see {@link globSource}) on RE2, loaded on first use: linear time in the path, so a
 * pattern with many stars (which would backtrack exponentially on JavaScript's RegExp) cannot stall the agent.
 */
export async function compileGlob(pattern: string): Promise<(path: string) => boolean> {
  const { RE2JS } = await import("re2js");
  const re = RE2JS.compile(globSource(pattern), RE2JS.DOTALL);
  return (path) => re.matcher(path).find();
}

function relativePosix(root: string, file: string): string {
  return relative(root, file).split(sep).join("/");
}

/** Files under `path` whose relative path matches `pattern`, one absolute path per line. */
export async function globFiles(cwd: string, pattern: string, path: string | undefined): Promise<string> {
  const root = await insideCwd(cwd, path);
  const matches = await compileGlob(pattern);
  const files = (await walk(root, false)).filter((file) => matches(relativePosix(root, file)));
  return files.join("\n");
}

/** A refused grep pattern. */
export class GrepPatternError extends Error {}

/** A matcher for one line on RE2 (loaded on the first grep); throws {@link GrepPatternError} for a refused pattern. */
export async function compileGrepPattern(
  pattern: string,
  caseInsensitive: boolean,
): Promise<(line: string) => boolean> {
  const { RE2JS, RE2JSException } = await import("re2js");
  try {
    const re = RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    return (line) => re.matcher(line).find();
  } catch (error) {
    if (error instanceof RE2JSException) {
      throw new GrepPatternError(`regex parse error: ${error.message} (patterns use RE2 syntax, as ripgrep's do)`);
    }
    throw error;
  }
}

/** Lines matching `pattern` as `file:line:text` (ripgrep's form), or `no matches`. */
export async function grepFiles(
  cwd: string,
  search: { pattern: string; path: string | undefined; glob: string | undefined; caseInsensitive: boolean },
): Promise<string> {
  const root = await insideCwd(cwd, search.path);
  const matches = await compileGrepPattern(search.pattern, search.caseInsensitive);
  const include = search.glob === undefined ? undefined : await compileGlob(search.glob);
  const info = await stat(root);
  const files = info.isDirectory() ? await walk(root, false) : [root];
  const lines: string[] = [];
  for (const file of files) {
    if (lines.length >= MAX_MATCHES) break;
    if (include !== undefined && !include(relativePosix(root, file))) continue;
    const size = (await stat(file)).size;
    if (size > MAX_GREP_BYTES) continue;
    const text = await readFile(file, "utf8");
    if (text.includes("\u0000")) continue;
    const fileLines = text.split(/\r?\n/);
    for (let i = 0; i < fileLines.length && lines.length < MAX_MATCHES; i++) {
      if (matches(fileLines[i] as string)) lines.push(`${file}:${i + 1}:${fileLines[i]}`);
    }
  }
  return lines.length === 0 ? "no matches" : lines.join("\n");
}
