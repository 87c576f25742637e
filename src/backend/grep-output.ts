/**
 * Parses a caller grep/glob tool's text output into a `GrepUnionResult` (docs/protocol.md §4.7). Two common output
 * shapes are understood: ripgrep's `file:line:text` lines and OpenCode's grouped form (`/path/file:` followed by
 * `  Line N: text`). Anything else counts as one file path per line.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { GrepUnionResultSchema } from "../gen/agent/v1/grep_exec_pb.js";

/** The `result` oneof of a GrepUnionResult, as an init shape. */
export type GrepUnion = NonNullable<MessageInitShape<typeof GrepUnionResultSchema>["result"]>;

interface FileMatches {
  file: string;
  matches: Array<{ lineNumber: number; content: string }>;
}

const RIPGREP_LINE = /^(.+?):(\d+):(.*)$/;
const GROUP_HEADER = /^(\S.*):$/;
const GROUP_LINE = /^\s+Line (\d+):\s?(.*)$/;

function parseContent(text: string): { files: FileMatches[]; plain: string[] } {
  const byFile = new Map<string, FileMatches>();
  const plain: string[] = [];
  let current: FileMatches | undefined;
  const fileEntry = (file: string) => {
    let entry = byFile.get(file);
    if (entry === undefined) {
      entry = { file, matches: [] };
      byFile.set(file, entry);
    }
    return entry;
  };
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === "") continue;
    const grouped = GROUP_LINE.exec(raw);
    if (grouped !== null && current !== undefined) {
      current.matches.push({ lineNumber: Number(grouped[1]), content: grouped[2] ?? "" });
      continue;
    }
    const ripgrep = RIPGREP_LINE.exec(raw);
    if (ripgrep !== null) {
      fileEntry(ripgrep[1] ?? "").matches.push({ lineNumber: Number(ripgrep[2]), content: ripgrep[3] ?? "" });
      continue;
    }
    const header = GROUP_HEADER.exec(raw);
    if (header !== null) {
      current = fileEntry(header[1] ?? "");
      continue;
    }
    plain.push(raw.trim());
  }
  return { files: [...byFile.values()], plain };
}

/** Builds the union result for `outputMode` (`content`, `files_with_matches` or `count`). */
export function parseGrepOutput(text: string, outputMode: string): GrepUnion {
  const { files, plain } = parseContent(text);
  const fileNames = files.length > 0 ? files.map((f) => f.file) : plain.filter((line) => !line.startsWith("("));
  if (outputMode === "files_with_matches" || (outputMode === "content" && files.length === 0)) {
    return { case: "files", value: { files: fileNames, totalFiles: fileNames.length } };
  }
  if (outputMode === "count") {
    const counts = files.map((f) => ({ file: f.file, count: f.matches.length }));
    const totalMatches = counts.reduce((sum, c) => sum + c.count, 0);
    return { case: "count", value: { counts, totalFiles: counts.length, totalMatches } };
  }
  const totalMatchedLines = files.reduce((sum, f) => sum + f.matches.length, 0);
  return {
    case: "content",
    value: { matches: files, totalLines: totalMatchedLines, totalMatchedLines },
  };
}
