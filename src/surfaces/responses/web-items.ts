/**
 * Cursor's web searches and fetches in the Responses shapes (issue #27): a `web_search_call` item (action `search`,
 * with `sources` when `include` asks for them, or `open_page` for a fetch) and the `url_citation` annotations of a
 * text that names a result URL. Pure.
 */
import type { BackendEvent, WebReference } from "../../backend/types.js";
import { citedReferences } from "../kit/web-citations.js";
import type { UrlCitation, WebSearchCallOutputItem } from "./wire.js";

/** The item of one web tool call, `in_progress` (the caller settles its status once its events are out). */
export function webSearchCallItem(
  event: Extract<BackendEvent, { type: "web-search" | "web-fetch" }>,
  id: string,
  includeSources: boolean,
): WebSearchCallOutputItem {
  if (event.type === "web-fetch") {
    return { type: "web_search_call", id, status: "in_progress", action: { type: "open_page", url: event.url } };
  }
  const sources =
    event.status === "completed" && includeSources
      ? { sources: event.references.map((reference) => ({ type: "url" as const, url: reference.url })) }
      : {};
  return {
    type: "web_search_call",
    id,
    status: "in_progress",
    action: { type: "search", query: event.query, ...sources },
  };
}

/** `url_citation`s for a finished text: each search result whose URL it names. */
export function urlCitations(text: string, references: readonly WebReference[]): UrlCitation[] {
  return citedReferences(text, references).map(({ reference, start, end }) => ({
    type: "url_citation",
    start_index: start,
    end_index: end,
    url: reference.url,
    title: reference.title,
  }));
}
