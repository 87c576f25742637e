/**
 * Anthropic server tools for web search and fetch (issue #27): the `web_search_*` / `web_fetch_*` tool definitions
 * become the engine's neutral `serverTools` (Cursor runs the search; the bridge only approves), and the engine's
 * `web-search` / `web-fetch` events become `server_tool_use` + `web_search_tool_result` / `web_fetch_tool_result`
 * blocks, text `citations` of type `web_search_result_location`, and `usage.server_tool_use`. Field shapes follow
 * the Anthropic SDK's type definitions. `encrypted_content` / `encrypted_index` are the bridge's own opaque tokens
 * (base64url JSON); nothing reads them back.
 */
import { createHash } from "node:crypto";
import type { BackendEvent, ServerTools, WebReference, WebToolLimits } from "../../backend/types.js";
import { citedReferences } from "../kit/web-citations.js";
import type { AnthropicToolParam } from "./request.js";

/** `web_search_20250305` and later versions → search; `web_fetch_…` → fetch. */
export function webToolKind(type: string | null | undefined): "search" | "fetch" | undefined {
  if (typeof type !== "string") return undefined;
  if (/^web_search_\d{8}$/.test(type)) return "search";
  if (/^web_fetch_\d{8}$/.test(type)) return "fetch";
  return undefined;
}

function limitsOf(tool: AnthropicToolParam): WebToolLimits {
  const raw = tool as { max_uses?: unknown; allowed_domains?: unknown; blocked_domains?: unknown };
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : undefined;
  const limits: WebToolLimits = {};
  if (typeof raw.max_uses === "number" && Number.isInteger(raw.max_uses) && raw.max_uses >= 0) {
    limits.maxUses = raw.max_uses;
  }
  const allowed = strings(raw.allowed_domains);
  if (allowed !== undefined) limits.allowedDomains = allowed;
  const blocked = strings(raw.blocked_domains);
  if (blocked !== undefined) limits.blockedDomains = blocked;
  return limits;
}

/** The web tools a request offers; undefined when none. */
export function toServerTools(tools: readonly AnthropicToolParam[]): ServerTools | undefined {
  const out: ServerTools = {};
  for (const tool of tools) {
    const kind = webToolKind(tool.type);
    if (kind === "search") out.webSearch = limitsOf(tool);
    else if (kind === "fetch") out.webFetch = limitsOf(tool);
  }
  return out.webSearch === undefined && out.webFetch === undefined ? undefined : out;
}

const DIRECT = { type: "direct" } as const;

/** `srvtoolu_…` id derived from Cursor's tool-call id (stable across a replay). */
export function serverToolUseId(toolCallId: string): string {
  return `srvtoolu_${createHash("sha256").update(toolCallId).digest("base64url").slice(0, 24)}`;
}

const opaque = (value: object) => Buffer.from(JSON.stringify({ v: 1, ...value })).toString("base64url");

/** Anthropic's error code for a refused or failed search. */
function searchErrorCode(event: Extract<BackendEvent, { type: "web-search" }>): string {
  if (event.status === "failed") return "unavailable";
  return /max_uses/.test(event.error) ? "max_uses_exceeded" : "invalid_tool_input";
}

/** Anthropic's error code for a refused or failed fetch. */
function fetchErrorCode(event: Extract<BackendEvent, { type: "web-fetch" }>): string {
  if (event.status === "failed") return "url_not_accessible";
  if (/max_uses/.test(event.error)) return "max_uses_exceeded";
  return /domain|http\(s\)/.test(event.error) ? "url_not_allowed" : "unavailable";
}

/** The blocks of one web tool call: the `server_tool_use` and its result. */
export interface WebBlocks {
  use: { type: "server_tool_use"; id: string; name: "web_search" | "web_fetch"; input: object; caller: typeof DIRECT };
  result: {
    type: "web_search_tool_result" | "web_fetch_tool_result";
    tool_use_id: string;
    content: unknown;
    caller: typeof DIRECT;
  };
}

/** Blocks for one `web-search` / `web-fetch` event. */
export function webBlocks(event: Extract<BackendEvent, { type: "web-search" | "web-fetch" }>): WebBlocks {
  const id = serverToolUseId(event.toolCallId);
  if (event.type === "web-search") {
    const content =
      event.status === "completed"
        ? event.references.map((reference) => ({
            type: "web_search_result",
            url: reference.url,
            title: reference.title,
            page_age: null,
            encrypted_content: opaque({ url: reference.url, chunk: reference.chunk }),
          }))
        : { type: "web_search_tool_result_error", error_code: searchErrorCode(event) };
    return {
      use: { type: "server_tool_use", id, name: "web_search", input: { query: event.query }, caller: DIRECT },
      result: { type: "web_search_tool_result", tool_use_id: id, content, caller: DIRECT },
    };
  }
  const content =
    event.status === "completed"
      ? {
          type: "web_fetch_result",
          url: event.url,
          retrieved_at: null,
          content: {
            type: "document",
            source: { type: "text", media_type: "text/plain", data: event.markdown },
            title: null,
            citations: null,
          },
        }
      : { type: "web_fetch_tool_result_error", error_code: fetchErrorCode(event) };
  return {
    use: { type: "server_tool_use", id, name: "web_fetch", input: { url: event.url }, caller: DIRECT },
    result: { type: "web_fetch_tool_result", tool_use_id: id, content, caller: DIRECT },
  };
}

/** A `web_search_result_location` citation. */
export interface WebCitation {
  type: "web_search_result_location";
  url: string;
  title: string | null;
  cited_text: string;
  encrypted_index: string;
}

/** Citations for a finished text: one per search result whose URL it names, in text order. */
export function citationsFor(text: string, references: readonly WebReference[]): WebCitation[] {
  return citedReferences(text, references).map(({ reference }) => ({
    type: "web_search_result_location",
    url: reference.url,
    title: reference.title === "" ? null : reference.title,
    cited_text: reference.chunk.slice(0, 150),
    encrypted_index: opaque({ url: reference.url }),
  }));
}
