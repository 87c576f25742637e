/**
 * Server-side web tools (cursor-protocol-addendum-2.md §7): Cursor runs web search and fetch on its own servers after
 * asking the client (`web_search_request_query` / `web_fetch_request_query`) and reports the outcome in
 * `tool_call_completed`. The bridge approves a query only when the caller offered the matching tool, within its
 * limits (max uses per turn, allowed / blocked domains); it never fetches anything itself. Pure apart from the
 * per-turn use counters.
 */
import type { WebFetchToolCall, WebSearchToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import type { BackendEvent, ServerTools, WebReference, WebToolLimits } from "./types.js";

/** The bridge's verdict on one query. */
export type WebVerdict = { approved: true } | { approved: false; reason: string };

/** Lower-cased host of an absolute http(s) URL, or undefined. */
export function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.hostname.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/** `host` is `domain` or one of its subdomains (a leading `*.` or `.` in the domain is ignored). */
function inDomain(host: string, domain: string): boolean {
  const d = domain
    .trim()
    .toLowerCase()
    .replace(/^\*?\./, "");
  return d !== "" && (host === d || host.endsWith(`.${d}`));
}

/** Why `host` is outside the limits, or undefined when it is inside. */
export function domainRefusal(host: string, limits: WebToolLimits): string | undefined {
  if (limits.blockedDomains?.some((domain) => inDomain(host, domain)) === true) {
    return `The domain ${host} is blocked for this request.`;
  }
  const allowed = limits.allowedDomains ?? [];
  if (allowed.length > 0 && !allowed.some((domain) => inDomain(host, domain))) {
    return `The domain ${host} is not among the allowed domains (${allowed.join(", ")}).`;
  }
  return undefined;
}

/** `site:` operators of a search query (the only domains a query names). */
function siteOperators(query: string): string[] {
  return [...query.matchAll(/(?:^|\s)site:(\S+)/gi)].map((match) => (match[1] ?? "").toLowerCase());
}

/** The verdicts of one turn: counts approved uses per tool. */
export class WebToolPolicy {
  private searches = 0;
  private fetches = 0;

  constructor(private readonly tools: ServerTools | undefined) {}

  /** Forgets the uses counted so far: the turn's first segment starts over (a retry after a dropped connection). */
  reset(): void {
    this.searches = 0;
    this.fetches = 0;
  }

  /** Approves or rejects a web search query for `query`. */
  search(query: string): WebVerdict {
    const limits = this.tools?.webSearch;
    if (limits === undefined) return refuse("The request offered no web search tool; answer without searching.");
    if (limits.maxUses !== undefined && this.searches >= limits.maxUses) {
      return refuse(`The web search limit of this request (max_uses ${limits.maxUses}) is reached.`);
    }
    for (const site of siteOperators(query)) {
      const refusal = domainRefusal(site, limits);
      if (refusal !== undefined) return refuse(refusal);
    }
    this.searches++;
    return { approved: true };
  }

  /** Approves or rejects a web fetch of `url`. */
  fetch(url: string): WebVerdict {
    const limits = this.tools?.webFetch;
    if (limits === undefined) return refuse("The request offered no web fetch tool; answer without fetching.");
    if (limits.maxUses !== undefined && this.fetches >= limits.maxUses) {
      return refuse(`The web fetch limit of this request (max_uses ${limits.maxUses}) is reached.`);
    }
    const host = hostOf(url);
    if (host === undefined) return refuse(`Not an http(s) URL: ${url}`);
    const refusal = domainRefusal(host, limits);
    if (refusal !== undefined) return refuse(refusal);
    this.fetches++;
    return { approved: true };
  }

  /** Approved searches so far. */
  get searchCount(): number {
    return this.searches;
  }

  /** Approved fetches so far. */
  get fetchCount(): number {
    return this.fetches;
  }

  /** The request offered this tool (else every use is refused, and no surface shows it). */
  offers(kind: "search" | "fetch"): boolean {
    return (kind === "search" ? this.tools?.webSearch : this.tools?.webFetch) !== undefined;
  }

  /** Keeps the references a search may show under the limits (Cursor may return any domain). */
  filterReferences(references: readonly WebReference[]): WebReference[] {
    const limits = this.tools?.webSearch;
    if (limits === undefined) return [...references];
    return references.filter((reference) => {
      const host = hostOf(reference.url);
      return host !== undefined && domainRefusal(host, limits) === undefined;
    });
  }
}

function refuse(reason: string): WebVerdict {
  return { approved: false, reason };
}

/** The event for a completed `web_search_tool_call`. */
export function webSearchEvent(callId: string, call: WebSearchToolCall, policy: WebToolPolicy): BackendEvent {
  const query = call.args?.searchTerm ?? "";
  const result = call.result?.result;
  const base = {
    type: "web-search" as const,
    toolCallId: call.args?.toolCallId || callId,
    query,
    ...(policy.offers("search") ? {} : { offered: false }),
  };
  switch (result?.case) {
    case "success": {
      const references = result.value.references.map(({ title, url, chunk }) => ({ title, url, chunk }));
      return { ...base, status: "completed", references: policy.filterReferences(references), error: "" };
    }
    case "rejected":
      return { ...base, status: "rejected", references: [], error: result.value.reason };
    case "error":
      return { ...base, status: "failed", references: [], error: result.value.error };
    default:
      return { ...base, status: "failed", references: [], error: "Cursor reported no result." };
  }
}

/** The event for a completed `web_fetch_tool_call`. */
export function webFetchEvent(callId: string, call: WebFetchToolCall, policy: WebToolPolicy): BackendEvent {
  const result = call.result?.result;
  const base = {
    type: "web-fetch" as const,
    toolCallId: call.args?.toolCallId || callId,
    url: call.args?.url ?? "",
    ...(policy.offers("fetch") ? {} : { offered: false }),
  };
  switch (result?.case) {
    case "success":
      return {
        ...base,
        url: result.value.url || base.url,
        status: "completed",
        markdown: result.value.markdown,
        error: "",
      };
    case "rejected":
      return { ...base, status: "rejected", markdown: "", error: result.value.reason };
    case "error":
      return { ...base, status: "failed", markdown: "", error: result.value.error };
    default:
      return { ...base, status: "failed", markdown: "", error: "Cursor reported no result." };
  }
}
