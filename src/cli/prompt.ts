/**
 * Reading from stdin: a whole piped stream, or one secret line typed at a terminal with echo turned off (raw mode),
 * so an API key never appears on screen or in the scrollback.
 */
import type { Readable, Writable } from "node:stream";
import type { ReadStream } from "node:tty";
import { ProxyError } from "../util/errors.js";

/** Reads a stream to the end as UTF-8. */
export async function readStream(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

const ENTER = new Set(["\r", "\n"]);
const CTRL_C = "\u0003";
const CTRL_D = "\u0004";
const BACKSPACE = new Set(["\u007f", "\b"]);

/** Applies one keypress chunk to the line typed so far; "done"/"canceled" end the prompt. */
export function applyKeys(line: string, keys: string): { line: string; state: "typing" | "done" | "canceled" } {
  let current = line;
  for (const key of keys) {
    if (key === CTRL_C) return { line: "", state: "canceled" };
    if (ENTER.has(key) || key === CTRL_D) return { line: current, state: "done" };
    if (BACKSPACE.has(key)) current = current.slice(0, -1);
    else if (key >= " ") current += key;
  }
  return { line: current, state: "typing" };
}

/** Prompts on `output` and reads one line from a TTY without echo. Ctrl-C rejects with `canceled`. */
export function readSecretFromTty(input: ReadStream, output: Writable, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    output.write(prompt);
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    input.setEncoding("utf8");
    let line = "";
    const finish = (): void => {
      input.off("data", onData);
      input.setRawMode(wasRaw);
      input.pause();
      output.write("\n");
    };
    const onData = (keys: string): void => {
      const next = applyKeys(line, keys);
      line = next.line;
      if (next.state === "typing") return;
      finish();
      if (next.state === "canceled") reject(new ProxyError("canceled", "Canceled."));
      else resolve(line);
    };
    input.on("data", onData);
  });
}
