/**
 * Which web search results a text cites (issue #27): every result whose URL the text names, at the first occurrence,
 * in text order. Each surface renders these in its own shape (Anthropic `web_search_result_location`, Responses and
 * Chat `url_citation`). Pure.
 */
import type { WebReference } from "../../backend/types.js";

/** A cited result and where its URL stands in the text (`end` exclusive, UTF-16 offsets as JavaScript counts). */
export interface CitedReference {
  reference: WebReference;
  start: number;
  end: number;
}

/** The results `text` cites. */
export function citedReferences(text: string, references: readonly WebReference[]): CitedReference[] {
  const seen = new Set<string>();
  const out: CitedReference[] = [];
  for (const reference of references) {
    if (seen.has(reference.url)) continue;
    const start = text.indexOf(reference.url);
    if (start === -1) continue;
    seen.add(reference.url);
    out.push({ reference, start, end: start + reference.url.length });
  }
  return out.sort((a, b) => a.start - b.start);
}
