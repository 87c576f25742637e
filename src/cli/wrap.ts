/**
 * Wraps help text to a terminal width. Lines that fit stay as written; a longer line breaks at spaces, and its
 * continuation lines are indented to where the line's text starts, or to its description column when the line is a
 * two-column entry ("  --port <n>   Port to listen on"), so options and their descriptions stay aligned, or to
 * the text of a list item ("  - the Cursor IDE: …").
 * Command lines under "Examples:" break with a shell backslash, so a pasted example still runs.
 */

/** The description column of a two-column entry ("  --port <n>   Port…"): where its second column starts. */
function descriptionColumn(line: string): number | undefined {
  const indent = line.length - line.trimStart().length;
  const column = /^(\s*\S.*?)( {2,})(?=\S)/.exec(line);
  if (indent === 0 || column?.[1] === undefined || column[2] === undefined) return undefined;
  return column[1].length + column[2].length;
}

/** Breaks `line` at spaces into lines of at most `width`, continuation lines indented by `pad`. */
function breakLine(line: string, width: number, pad: number): string[] {
  const out: string[] = [];
  const lead = line.length - line.trimStart().length;
  let rest = line;
  let prefix = "";
  while (prefix.length + rest.length > width) {
    const room = width - prefix.length;
    // Never break inside the leading indentation; a word longer than the room stays whole.
    const minimum = prefix === "" ? lead + 1 : 1;
    let cut = rest.lastIndexOf(" ", room);
    if (cut < minimum) cut = rest.indexOf(" ", room);
    if (cut < minimum) break;
    out.push(prefix + rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
    prefix = " ".repeat(pad);
  }
  out.push(prefix + rest);
  return out;
}

/** Where the text of a list item ("  - text") starts; undefined for any other line. */
function itemColumn(line: string): number | undefined {
  const item = /^(\s*)- \S/.exec(line);
  return item?.[1] === undefined ? undefined : item[1].length + 2;
}

function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const lead = line.length - line.trimStart().length;
  const column = descriptionColumn(line);
  if (column === undefined) return breakLine(line, width, itemColumn(line) ?? lead);
  if (column <= width / 2) return breakLine(line, width, column);
  // A wide first column: the description moves below it, indented.
  const pad = lead + 6;
  return [line.slice(0, column).trimEnd(), ...breakLine(" ".repeat(pad) + line.slice(column), width, pad)];
}

/** A command line of an Examples section: continued with a shell backslash, so it still runs when pasted. */
function wrapCommand(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const lead = line.length - line.trimStart().length;
  // A trailing comment goes above the command: a backslash inside a comment would not continue the line.
  const commented = /^(\s*)(\S.*?)\s+(#\s.*)$/.exec(line);
  if (commented?.[1] !== undefined && commented[2] !== undefined && commented[3] !== undefined) {
    const [, indent, command, comment] = commented;
    return [...wrapLine(indent + comment, width), ...wrapCommand(indent + command, width)];
  }
  const parts = breakLine(line, width - 2, lead + 4);
  return parts.map((part, i) => (i < parts.length - 1 ? `${part} \\` : part));
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * Where the lines continuing `line` start: its description column for a two-column entry, the text of a list item,
 * else its own indent.
 */
export function continuationIndent(line: string): number {
  return descriptionColumn(line) ?? itemColumn(line) ?? indentOf(line);
}

/**
 * The help text with hard line breaks inside a paragraph removed: a line continuing the one before (same indent as
 * that line's continuation, neither blank, the first not a heading ending in ":", the second not a list item) is
 * joined to it, so a paragraph written for one width rewraps cleanly at another. Examples keep their lines.
 */
function joinParagraphs(text: string): string[] {
  const out: string[] = [];
  let examples = false;
  for (const line of text.split("\n")) {
    if (/^\S/.test(line)) examples = /^Examples?:/.test(line);
    const previous = out.at(-1);
    const joinable =
      !examples &&
      previous !== undefined &&
      previous.trim() !== "" &&
      line.trim() !== "" &&
      !previous.endsWith(":") &&
      !/^Usage:/.test(line) &&
      descriptionColumn(line) === undefined &&
      itemColumn(line) === undefined &&
      indentOf(line) === continuationIndent(previous) &&
      (indentOf(line) > 0 || !/^\S[^.]*:\s/.test(line));
    if (joinable) out[out.length - 1] = `${previous.trimEnd()} ${line.trimStart()}`;
    else out.push(line);
  }
  return out;
}

/** `text` with every line wrapped to `width` columns (at least 40). */
export function wrapText(text: string, width: number): string {
  const columns = Math.max(40, Math.floor(width));
  let examples = false;
  return joinParagraphs(text)
    .flatMap((line) => {
      if (/^\S/.test(line)) examples = /^Examples?:/.test(line);
      return examples && !line.trimStart().startsWith("#") ? wrapCommand(line, columns) : wrapLine(line, columns);
    })
    .join("\n");
}

/** The width help wraps to: the terminal's columns when stdout is a terminal, else 80. */
export function helpWidth(columns: number | undefined): number {
  return columns !== undefined && columns > 0 ? columns : 80;
}
