/**
 * A line diff for showing what `setup --write` changed: unified format with three lines of context, computed with a
 * plain longest-common-subsequence table (config files are small; past {@link MAX_LINES} lines it says so instead).
 */

const MAX_LINES = 3000;
const CONTEXT = 3;

type Op = { kind: " " | "-" | "+"; text: string; oldLine: number; newLine: number };

function operations(before: string[], after: string[]): Op[] {
  const n = before.length;
  const m = after.length;
  // lcs[i][j]: length of the LCS of before[i..] and after[j..], in one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = before[i] === after[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      ops.push({ kind: " ", text: before[i] ?? "", oldLine: i++, newLine: j++ });
    } else if (i < n && (j >= m || at(i + 1, j) >= at(i, j + 1))) {
      // Deletions before insertions, as diff(1) prints them.
      ops.push({ kind: "-", text: before[i] ?? "", oldLine: i++, newLine: j });
    } else {
      ops.push({ kind: "+", text: after[j] ?? "", oldLine: i, newLine: j++ });
    }
  }
  return ops;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  return text.replace(/\n$/, "").split("\n");
}

/** A unified diff of two texts ("" when they are equal). `label` names the file in the header. */
export function unifiedDiff(before: string, after: string, label: string): string {
  if (before === after) return "";
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  if (oldLines.length > MAX_LINES || newLines.length > MAX_LINES) {
    return `--- ${label}\n+++ ${label}\n(the file is longer than ${MAX_LINES} lines; no diff shown)\n`;
  }
  const ops = operations(oldLines, newLines);
  const changed = ops.flatMap((op, index) => (op.kind === " " ? [] : [index]));
  const out = [`--- ${label}`, `+++ ${label}`];
  let index = 0;
  while (index < changed.length) {
    const first = changed[index] ?? 0;
    let last = first;
    while (index + 1 < changed.length && (changed[index + 1] ?? 0) - last <= 2 * CONTEXT + 1) {
      last = changed[++index] ?? last;
    }
    index++;
    const start = Math.max(0, first - CONTEXT);
    const end = Math.min(ops.length, last + CONTEXT + 1);
    const hunk = ops.slice(start, end);
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    const oldStart = (hunk[0]?.oldLine ?? 0) + (oldCount > 0 ? 1 : 0);
    const newStart = (hunk[0]?.newLine ?? 0) + (newCount > 0 ? 1 : 0);
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.text}`);
  }
  return `${out.join("\n")}\n`;
}
