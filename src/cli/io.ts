/**
 * Terminal I/O for commands: injected so tests capture output, with colour only on a TTY.
 */
import { readSecretFromTty, readStream } from "./prompt.js";

/** Standard input, for commands that read a secret (`login --api-key`). */
export interface CliInput {
  /** True when stdin is a terminal (prompt without echo) rather than a pipe. */
  isTty: boolean;
  /** Reads stdin to the end (piped input). */
  readAll(): Promise<string>;
  /** Shows `prompt` on stderr and reads one line without echoing it. */
  readSecret(prompt: string): Promise<string>;
}

/** What a command may use to talk to the user. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is a terminal (colour unless NO_COLOR is set, spinners, opening the browser to log in). */
  isTty: boolean;
  /** The terminal's width when stdout is a terminal (help wraps to it; 80 otherwise). */
  columns?: number | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** Standard input; absent when the host has none (commands then ask for the environment variable instead). */
  input?: CliInput;
}

/** The process's real streams. */
export function processIo(): CliIo {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    isTty: process.stdout.isTTY === true,
    columns: process.stdout.isTTY === true ? process.stdout.columns : undefined,
    env: process.env,
    input: {
      // A getter: process.stdin is made on first use (a stream over fd 0), which a server never needs.
      get isTty() {
        return process.stdin.isTTY === true;
      },
      readAll: () => readStream(process.stdin),
      readSecret: (prompt) => readSecretFromTty(process.stdin, process.stderr, prompt),
    },
  };
}

/** ANSI styling that turns itself off when output is not a terminal. */
export function createStyle(enabled: boolean) {
  const wrap = (code: number) => (text: string) => (enabled ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { bold: wrap(1), dim: wrap(2), red: wrap(31), green: wrap(32), yellow: wrap(33), cyan: wrap(36) };
}

/** The styling functions of {@link createStyle}. */
export type Style = ReturnType<typeof createStyle>;

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

/** Formats label/value pairs as aligned lines, indented by two spaces. */
export function formatFields(fields: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(0, ...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `  ${label.padEnd(width)}  ${value}\n`).join("");
}
