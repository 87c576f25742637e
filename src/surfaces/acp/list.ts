/**
 * `session/list`: the stored sessions, filtered by `cwd`, newest first, {@link PAGE_SIZE} a page. The cursor is
 * opaque to the editor: the update time and id of the page's last session, so a page never repeats or skips a
 * session that was not saved between the two requests. Index entries whose session is gone (expired or evicted
 * from the store) are dropped as a page is built.
 */
import { type ListSessionsResponse, RequestError, type SessionInfo } from "@agentclientprotocol/sdk";
import { type AcpSessionStore, type AcpSessionSummary, compareSummaries } from "./session-store.js";

/** Sessions per page. */
export const PAGE_SIZE = 50;

interface Position {
  updatedAt: number;
  id: string;
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.updatedAt, position.id])).toString("base64url");
}

function decodeCursor(cursor: string): Position {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "number" && typeof value[1] === "string") {
      return { updatedAt: value[0], id: value[1] };
    }
  } catch {
    // answered below
  }
  throw RequestError.invalidParams(undefined, "cursor is not one this agent returned.");
}

function infoOf(summary: AcpSessionSummary): SessionInfo {
  return {
    sessionId: summary.id,
    cwd: summary.cwd,
    title: summary.title ?? null,
    updatedAt: new Date(summary.updatedAt).toISOString(),
  };
}

/** One page of sessions. */
export async function listPage(
  store: AcpSessionStore,
  request: { cwd: string | undefined; cursor: string | undefined },
  pageSize = PAGE_SIZE,
): Promise<ListSessionsResponse> {
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  const candidates = (await store.list()).filter(
    (s) =>
      (request.cwd === undefined || s.cwd === request.cwd) &&
      (after === undefined || compareSummaries({ ...after, cwd: "" }, s) < 0),
  );
  const page: AcpSessionSummary[] = [];
  let index = 0;
  for (; index < candidates.length && page.length < pageSize; index++) {
    const summary = candidates[index] as AcpSessionSummary;
    if ((await store.get(summary.id)) === undefined) await store.delete(summary.id);
    else page.push(summary);
  }
  const last = page.at(-1);
  const more = index < candidates.length && last !== undefined;
  return { sessions: page.map(infoOf), ...(more ? { nextCursor: encodeCursor(last) } : {}) };
}
