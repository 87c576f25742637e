/**
 * Response headers that list client-supplied names (`x-cursor-bridge-ignored-params`) or many notes
 * (`x-cursor-bridge-warnings`) are bounded: 3,000 unknown keys once made a header larger than clients accept, so the
 * user got no answer while quota was spent. Items are made header-safe (printable ASCII; anything else escaped) and
 * the list is cut at about 1 KB with "... and N more".
 */

/** Longest header value written by {@link headerList}. */
export const MAX_HEADER_LIST_CHARS = 1024;
const MAX_ITEM_CHARS = 300;

/** A value made safe for an HTTP header: printable ASCII only, others as `\uXXXX`, cut to `max` characters. */
export function headerSafe(text: string, max = MAX_ITEM_CHARS): string {
  const cut = text.length > max ? `${text.slice(0, max)}...` : text;
  return cut.replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Joins `items` with `separator` into one header value of at most `maxChars` characters. */
export function headerList(items: readonly string[], separator: string, maxChars = MAX_HEADER_LIST_CHARS): string {
  const safe = items.map((item) => headerSafe(item));
  const full = safe.join(separator);
  if (full.length <= maxChars) return full;
  const reserve = `${separator}... and ${items.length} more`.length;
  let out = "";
  let count = 0;
  for (const item of safe) {
    const next = count === 0 ? item : `${out}${separator}${item}`;
    if (next.length > maxChars - reserve) break;
    out = next;
    count += 1;
  }
  const rest = items.length - count;
  return count === 0 ? `... ${rest} items` : `${out}${separator}... and ${rest} more`;
}
