/**
 * Terminal I/O for commands: injected so tests capture output, with colour only on a TTY.
 */

/** What a command may use to talk to the user. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is a terminal (colour, spinners). */
  isTty: boolean;
  env: Readonly<Record<string, string | undefined>>;
}

/** The process's real streams. */
export function processIo(): CliIo {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    isTty: process.stdout.isTTY === true && process.env.NO_COLOR === undefined,
    env: process.env,
  };
}

/** ANSI styling that turns itself off when output is not a terminal. */
export function createStyle(enabled: boolean) {
  const wrap = (code: number) => (text: string) => (enabled ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { bold: wrap(1), dim: wrap(2), red: wrap(31), green: wrap(32), yellow: wrap(33), cyan: wrap(36) };
}

/** Formats rows as an aligned table (no colour inside cells so widths stay right). */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return `${[line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n")}\n`;
}
