/**
 * Wraps help text to a terminal width. Lines that fit stay as written; a longer line breaks at spaces, and its
 * continuation lines are indented to where the line's text starts, or to its description column when the line is a
 * two-column entry ("  --port <n>   Port to listen on"), so options and their descriptions stay aligned.
 */

/** Where continuation lines of `line` start: the description column of a two-column entry, else the indent. */
function hangingIndent(line: string): number {
  const indent = line.length - line.trimStart().length;
  const column = /^(\s*\S.*?\S?)( {2,})(?=\S)/.exec(line);
  if (column?.[1] !== undefined && column[2] !== undefined && indent > 0) return column[1].length + column[2].length;
  return indent;
}

function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  let pad = hangingIndent(line);
  if (pad > width / 2) pad = line.length - line.trimStart().length;
  const out: string[] = [];
  let rest = line;
  let prefix = "";
  while (prefix.length + rest.length > width) {
    const room = width - prefix.length;
    let cut = rest.lastIndexOf(" ", room);
    // Never break inside the leading indentation (or the first column), and never before any text at all.
    const minimum = prefix === "" ? pad : 1;
    if (cut < minimum) cut = rest.indexOf(" ", room);
    if (cut < minimum) break;
    out.push(prefix + rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
    prefix = " ".repeat(pad);
  }
  out.push(prefix + rest);
  return out;
}

/** `text` with every line wrapped to `width` columns (at least 40). */
export function wrapText(text: string, width: number): string {
  const columns = Math.max(40, Math.floor(width));
  return text
    .split("\n")
    .flatMap((line) => wrapLine(line, columns))
    .join("\n");
}

/** The width help wraps to: the terminal's columns when stdout is a terminal, else 80. */
export function helpWidth(columns: number | undefined): number {
  return columns !== undefined && columns > 0 ? columns : 80;
}
