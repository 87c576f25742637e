/**
 * The durable conversation index: one append-only log file, `index.jsonl`, one `{"k":key,"c":conversationId,
 * "t":epochMs}` line per remembered turn (the last line for a key wins). Startup reads that one file, never the
 * conversation records. Writes are batched: every `remember` of the same tick goes out in one append, and its
 * promise resolves once the append is done, so an entry is durable against a crash (kill -9) before the response
 * that produced it completes. When the log holds far more lines than live entries it is compacted (rewritten
 * atomically). Entries older than the TTL are dropped at load and compaction; beyond `maxEntries` the least
 * recently used go first.
 *
 * The log stays open between appends (an open and a close per turn saved). A compaction replaces the file by a rename,
 * this process's or another's sharing the directory (`serve` and `acp`): after each append the open file's link count
 * says whether it is still the one at `index.jsonl` (0: replaced, or the directory was removed), and if not the
 * batch is appended again to the file there now. That leaves the same window as an open per append had (a line
 * appended just before another process's rename is not in its rewrite). An append a full disk cut short leaves a torn
 * line: the next append of this process starts with a newline, and a line read back is the entry it ends with when it
 * does not parse whole (json-lines.ts), so the entry after a tear is kept.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { appendFile, chmod, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Logger, silentLogger } from "../../util/logger.js";
import { makeDir } from "../../util/make-dir.js";
import { parseJsonLine } from "../json-lines.js";
import { LruMap } from "../memory/lru-map.js";
import type { ConversationIndex } from "../types.js";
import { writeAllSync, writeDirectOrPooled, writeFileAtomic } from "./atomic-write.js";

/** Options of {@link createFileConversationIndex}. */
export interface FileConversationIndexOptions {
  /** Directory of the log (created 0700); the conversation store's directory is a good place. */
  dir: string;
  /** One entry per answered turn, so well above the number of conversations. @default 50_000 */
  maxEntries?: number | undefined;
  /** Entries older than this are forgotten (the conversation records expire too). @default 7 days */
  ttlMs?: number | undefined;
  /** @default Date.now */
  now?: () => number;
  logger?: Logger;
}

const FILE_NAME = "index.jsonl";

interface Line {
  k: string;
  c: string;
  t: number;
}

/** A line of the log (an entry appended after a torn one, on its line, included: json-lines.ts), or undefined. */
function parseLine(text: string): Line | undefined {
  const value = parseJsonLine(text) as Partial<Line> | undefined;
  if (typeof value?.k === "string" && typeof value.c === "string" && typeof value.t === "number") {
    return { k: value.k, c: value.c, t: value.t };
  }
  return undefined;
}

/** Opens (or creates) the index in `dir`; resolves once the existing log has been read. */
export async function createFileConversationIndex(options: FileConversationIndexOptions): Promise<ConversationIndex> {
  const maxEntries = options.maxEntries ?? 50_000;
  const ttlMs = options.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const path = join(options.dir, FILE_NAME);
  await makeDir(options.dir);
  await chmod(options.dir, 0o700);

  const entries = new LruMap(maxEntries);
  const times = new Map<string, number>();
  let lines = 0;
  let text = "";
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  /** The log ends inside a line (an append cut short): the next append starts with a newline of its own. */
  let torn = text.length > 0 && !text.endsWith("\n");
  let corrupt = 0;
  for (const raw of text.split("\n")) {
    if (raw === "") continue;
    lines += 1;
    const line = parseLine(raw);
    // A torn last line (crash in the middle of an append) or foreign content: skipped, reported once below.
    if (line === undefined) corrupt += 1;
    else if (now() - line.t <= ttlMs) {
      for (const evicted of entries.set(line.k, line.c)) times.delete(evicted);
      times.set(line.k, line.t);
    }
  }
  if (corrupt > 0) logger.warn("skipped unreadable lines of the conversation index", { path, lines: corrupt });

  /** The log, open for appending between batches (see the module comment). */
  let fd: number | undefined;
  const closeLog = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  const appendDirect = (text: string) => {
    const bytes = [Buffer.from(text, "utf8")];
    fd ??= openSync(path, "a", 0o600);
    writeAllSync(fd, bytes);
    if (fstatSync(fd).nlink > 0) return;
    // Replaced by a compaction (or removed) since it was opened: the batch goes to the file there now.
    closeLog();
    fd = openSync(path, "a", 0o600);
    writeAllSync(fd, bytes);
  };

  let pending: string[] = [];
  let flushing: Promise<void> | undefined;
  let scheduled: Promise<void> | undefined;

  const compact = async () => {
    const live: string[] = [];
    for (const [key, id] of entries) {
      const t = times.get(key) ?? now();
      if (now() - t <= ttlMs) live.push(JSON.stringify({ k: key, c: id, t }));
    }
    await writeFileAtomic(path, live.length === 0 ? "" : `${live.join("\n")}\n`);
    closeLog();
    logger.debug("compacted the conversation index", { before: lines, after: live.length });
    lines = live.length;
  };

  const flush = async (): Promise<void> => {
    await flushing;
    const batch = pending;
    pending = [];
    scheduled = undefined;
    if (batch.length === 0) return;
    const mine = (async () => {
      // A direct system call (one batch of lines is small) unless direct writes are slow here: see atomic-write.ts.
      const text = `${torn ? "\n" : ""}${batch.join("\n")}\n`;
      try {
        await writeDirectOrPooled(
          () => appendDirect(text),
          () => appendFile(path, text, { mode: 0o600 }),
        );
      } catch (error) {
        // Part of it may be out (a full disk): the next append must not continue that line.
        torn = true;
        throw error;
      }
      torn = false;
      lines += batch.length;
      if (lines > 2 * Math.max(entries.size, 1000)) await compact();
    })();
    flushing = mine;
    try {
      await mine;
    } finally {
      if (flushing === mine) flushing = undefined;
    }
  };

  return {
    remember(key, conversationId) {
      // Written only on change: a retried turn re-remembering the same entry costs no disk work.
      if (entries.get(key) === conversationId) return scheduled ?? flushing ?? Promise.resolve();
      for (const evicted of entries.set(key, conversationId)) times.delete(evicted);
      const t = now();
      times.set(key, t);
      pending.push(JSON.stringify({ k: key, c: conversationId, t }));
      // One append for everything remembered in this tick (a microtask later: the append is a direct system call,
      // so waiting for the next event-loop turn would only delay the answer that waits for it).
      scheduled ??= Promise.resolve().then(flush);
      return scheduled;
    },
    lookup: async (key) => entries.get(key),
    size: () => entries.size,
    async close() {
      await (scheduled ?? flushing);
      closeLog();
    },
  };
}
