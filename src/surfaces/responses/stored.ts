/**
 * Whose a stored response is. Under the team gateway's virtual keys a response belongs to the key whose request made
 * it: only that key's requests read, continue (`previous_response_id`) or delete it, and to any other caller it is
 * unknown, as an id never issued is. One place for the rule, shared by the eager routes (route.ts: `GET`, `DELETE`)
 * and the handler loaded on the first `POST` (handlers.ts).
 */
import type { Context } from "hono";
import type { ResponseStore, StoredResponse } from "../../stores/types.js";
import type { AppEnv } from "../kit/access-log.js";

/** The owner a request's stored responses get: its virtual key's id, or undefined without virtual keys. */
export function ownerOf(c: Context<AppEnv>): string | undefined {
  return c.get("principal")?.keyId;
}

/** What every id this surface gives a response starts with (handlers.ts). */
export const RESPONSE_ID_PREFIX = "resp_";

/**
 * The stored response `id`, when the request's caller may see it; undefined when unknown or another key's. Only ids
 * this surface issues are looked up: the store also holds other surfaces' records (`acp`'s editor sessions, under
 * `acp-session:…`, and their index), which no HTTP client may read, continue or delete.
 */
export async function storedFor(
  store: ResponseStore,
  id: string,
  c: Context<AppEnv>,
): Promise<StoredResponse | undefined> {
  if (!id.startsWith(RESPONSE_ID_PREFIX)) return undefined;
  const stored = await store.get(id);
  return stored !== undefined && stored.owner === ownerOf(c) ? stored : undefined;
}
