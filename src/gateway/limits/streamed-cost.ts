/**
 * The cost of a streamed answer is known only once its last frame is written, after the headers left. It is sent
 * as HTTP trailers, declared up front (`Trailer: x-cursor-bridge-cost, x-cursor-bridge-spend-after`): the body is
 * passed through a stream whose `flush` (run after the last frame, before the response ends) settles the request
 * and adds the trailers to Node's response. Clients that read trailers (Node's http, curl --raw) see them; fetch
 * clients do not, and read the spend from the next answer's `x-cursor-bridge-spend` instead.
 */
import type { ServerResponse } from "node:http";
import type { Context } from "hono";
import type { AppEnv } from "../../surfaces/kit/access-log.js";

/** The trailers a streamed answer ends with. */
export const COST_TRAILERS = ["x-cursor-bridge-cost", "x-cursor-bridge-spend-after"] as const;

/** Node's response of the request, when the app runs on @hono/node-server and was handed its bindings. */
function nodeResponse(c: Context<AppEnv>): ServerResponse | undefined {
  const env = c.env as { outgoing?: unknown } | undefined;
  const outgoing = env?.outgoing;
  return typeof (outgoing as ServerResponse | undefined)?.addTrailers === "function"
    ? (outgoing as ServerResponse)
    : undefined;
}

/**
 * Makes the streamed response end with the cost trailers computed by `settle` (called once, after the last frame;
 * when the client goes away first, the trailers are never sent). Without a Node response nothing is changed and
 * false is returned.
 */
export function sendCostAsTrailers(
  c: Context<AppEnv>,
  settle: () => Promise<Record<(typeof COST_TRAILERS)[number], string>>,
): boolean {
  const outgoing = nodeResponse(c);
  const response = c.res;
  if (outgoing === undefined || response.body === null) return false;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async flush() {
        try {
          const trailers = await settle();
          if (!outgoing.writableEnded) outgoing.addTrailers(trailers);
        } catch {
          // Settling failed (the store is unreachable): the body still ends, without trailers.
        }
      },
    }),
  );
  const headers = new Headers(response.headers);
  headers.set("trailer", COST_TRAILERS.join(", "));
  // Cleared first: assigning over a response merges the old one's headers into the new one.
  c.res = undefined;
  c.res = new Response(body, { status: response.status, statusText: response.statusText, headers });
  return true;
}
