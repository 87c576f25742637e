/**
 * Wraps help text to a terminal width. Lines that fit stay as written; a longer line breaks at spaces, and its
 * continuation lines are indented to where the line's text starts, or to its description column when the line is a
 * two-column entry ("  --port <n>   Port to listen on"), so options and their descriptions stay aligned.
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

function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const lead = line.length - line.trimStart().length;
  const column = descriptionColumn(line);
  if (column === undefined) return breakLine(line, width, lead);
  if (column <= width / 2) return breakLine(line, width, column);
  // A wide first column: the description moves below it, indented.
  const pad = lead + 6;
  return [line.slice(0, column).trimEnd(), ...breakLine(" ".repeat(pad) + line.slice(column), width, pad)];
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
