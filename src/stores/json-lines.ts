/**
 * Reading the JSON-lines files of the stores (the conversation index, the audit log). An append that a full disk cut
 * short leaves the start of its line at the end of the file, without its newline, and the next append (a whole line)
 * then goes on the same line: the line is the torn start followed by a complete object. Reading only whole lines lost
 * that next entry too, though every byte of it was written; {@link parseJsonLine} finds it at the line's end.
 */

/** Starts of objects tried at the end of a line that does not parse whole (a foreign line costs at most this many). */
const TRIES = 16;

/**
 * The JSON value of `text`; when it does not parse whole, the complete object it ends with (after a torn start), or
 * undefined. Inside a JSON string a quote is escaped, so `{"` there never starts an object: the object an entry
 * ends with is found by trying the `{"` of the line from its end.
 */
export function parseJsonLine(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // a torn start, or not JSON at all: see below
  }
  let at = text.lastIndexOf('{"');
  for (let tries = 0; at > 0 && tries < TRIES; tries += 1) {
    try {
      return JSON.parse(text.slice(at));
    } catch {
      at = text.lastIndexOf('{"', at - 1);
    }
  }
  return undefined;
}
