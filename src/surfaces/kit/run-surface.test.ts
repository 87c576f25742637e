/**
 * runSurface owns the client-disconnect abort: its listener on the request's signal is removed on every path (turn
 * refused, JSON answered, JSON failed, stream ended, stream failed, stream canceled), and a disconnect aborts the turn.
 */
import { getEventListeners } from "node:events";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { BackendEvent, ModelInfo } from "../../backend/types.js";
import type { Engine, EngineTurn } from "../../engine/index.js";
import { ProxyError } from "../../util/errors.js";
import type { AppEnv } from "./access-log.js";
import { createModelNames } from "./model-names.js";
import { runSurface, type SurfaceRenderer } from "./run-surface.js";

const MODEL: ModelInfo = { id: "m", displayName: "M", aliases: [], reasoning: false, maxMode: false, vision: false };

type Script = "refuse" | "ok" | "fail" | "hang";

function engineFor(script: Script, seen: { signal?: AbortSignal }): Engine {
  return {
    listModels: async () => [MODEL],
    async startTurn(_request, signal): Promise<EngineTurn> {
      seen.signal = signal;
      if (script === "refuse") throw new ProxyError("rate_limited", "slow down");
      async function* events(): AsyncGenerator<BackendEvent> {
        yield { type: "text-delta", text: "a" };
        if (script === "fail") throw new ProxyError("backend_unavailable", "gone");
        if (script === "hang") {
          await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
        }
        yield { type: "turn-end", reason: "stop" };
      }
      return { route: "new", model: MODEL, events: events() };
    },
  };
}

/** A translation that answers the text (JSON) or one line per event kind (stream). */
const renderer: SurfaceRenderer<string, { text: string }> = {
  translation() {
    let text = "";
    return {
      on: {
        "text-delta": (event, emit) => {
          text += event.text;
          emit("text-delta");
        },
        "turn-end": (_event, emit) => emit("turn-end"),
      },
      finish() {},
      fail: (_error, _context, emit) => emit("error"),
      result: () => ({ text }),
    };
  },
  wire: { encode: (frame) => `${frame}\n`, end: "" },
};

async function run(script: Script, stream: boolean, consume: (response: Response) => Promise<void>) {
  const seen: { signal?: AbortSignal } = {};
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("log", { requestId: "r1", startedAt: 0 });
    await next();
  });
  app.post("/x", (c) =>
    runSurface(
      c,
      { engine: engineFor(script, seen), models: createModelNames(), now: () => 0 },
      {
        request: {
          model: "m",
          instructions: [],
          messages: [],
          tools: [],
          options: { reasoning: false, reasoningEffort: undefined, toolChoice: "auto" },
        },
        ignoredParams: [],
        warnings: [],
        stream,
      },
      renderer,
    ),
  );
  app.onError((error) => new Response(ProxyError.from(error).code, { status: ProxyError.from(error).status }));
  const request = new Request("http://localhost/x", { method: "POST", body: "{}" });
  const before = getEventListeners(request.signal, "abort").length;
  const response = await app.request(request);
  await consume(response);
  return { listeners: getEventListeners(request.signal, "abort").length - before, seen, response };
}

describe("runSurface and the client's disconnect listener", () => {
  it.each([
    ["the turn is refused", "refuse", false, 429],
    ["a JSON answer", "ok", false, 200],
    ["a JSON answer that fails", "fail", false, 503],
    ["a stream that ends", "ok", true, 200],
    ["a stream that fails", "fail", true, 200],
  ] as const)("is removed when %s", async (_name, script, stream, status) => {
    const { listeners, response } = await run(script, stream, async (r) => {
      await r.text();
    });
    expect(response.status).toBe(status);
    expect(listeners).toBe(0);
  });

  it("is removed when the client cancels the stream, and the cancel aborts the turn", async () => {
    const { listeners, seen } = await run("hang", true, async (response) => {
      const reader = response.body?.getReader();
      await reader?.read();
      await reader?.cancel();
    });
    expect(seen.signal?.aborted).toBe(true);
    expect(listeners).toBe(0);
  });
});
