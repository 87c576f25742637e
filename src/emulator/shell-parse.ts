/**
 * `ShellArgs.parsing_result` for the emulator's native shell execs: current clients refuse a shell exec without it
 * ("Parsing result is required", cursor-protocol-addendum-2.md §6). A small word splitter, not a shell: it splits the
 * command at `;`, `&&`, `||` and `|` outside quotes, names each piece by its first word and lists the other words
 * as `word` arguments; unbalanced quotes set `parsing_failed`.
 */
import { create } from "@bufbuild/protobuf";
import { type ShellCommandParsingResult, ShellCommandParsingResultSchema } from "../gen/agent/v1/shell_exec_pb.js";

interface Piece {
  text: string;
  words: string[];
}

/** Splits a command line into pieces and words; undefined when a quote is left open. */
function split(command: string): Piece[] | undefined {
  const pieces: Piece[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let start = 0;
  let quote: string | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endPiece = (at: number, skip: number) => {
    endWord();
    const text = command.slice(start, at).trim();
    if (text !== "") pieces.push({ text, words });
    words = [];
    start = at + skip;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"') word = (word ?? "") + (command[++i] ?? "");
      else word = (word ?? "") + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\") word = (word ?? "") + (command[++i] ?? "");
    else if (command.startsWith("&&", i) || command.startsWith("||", i)) {
      endPiece(i, 2);
      i++;
    } else if (c === ";" || c === "|") endPiece(i, 1);
    else if (/\s/.test(c)) endWord();
    else word = (word ?? "") + c;
  }
  if (quote !== undefined) return undefined;
  endPiece(command.length, 0);
  return pieces;
}

/** The parsing result of one command line. */
export function parseShellCommand(command: string): ShellCommandParsingResult {
  const pieces = split(command);
  const unquoted = command.replace(/'[^']*'/g, "");
  return create(ShellCommandParsingResultSchema, {
    parsingFailed: pieces === undefined,
    executableCommands: (pieces ?? []).map((piece) => ({
      name: piece.words[0] ?? "",
      args: piece.words.slice(1).map((value) => ({ type: "word", value })),
      fullText: piece.text,
    })),
    hasRedirects: /[<>]/.test(unquoted),
    hasCommandSubstitution: /\$\(|`/.test(unquoted),
  });
}
