/**
 * What the chat door does with `POST /v1/chat/completions` (route.ts loads it on the door's first request, after
 * the server answers its first /health): parse → translate to an engine request → the kit's runSurface (model
 * names, engine, abort, log, headers) → chunks or one completion.
 */
import type { Context } from "hono";
import type { AppEnv } from "../kit/access-log.js";
import type { ReasoningOutput } from "../kit/deps.js";
import { readJson } from "../kit/json-body.js";
import { runSurface } from "../kit/run-surface.js";
import type { SurfaceDeps } from "../kit/surface-app.js";
import { CHAT_WIRE, chatTranslation } from "./events.js";
import { parseChatCompletionRequest } from "./parse.js";
import { toTurnInput } from "./translate.js";

/** Options of the chat door. */
export interface ChatOptions {
  reasoningOutput: ReasoningOutput;
  /** Total decoded image bytes accepted in one request. @default DEFAULT_MAX_IMAGE_BYTES (kit/image-input.ts, 15 MiB) */
  maxImageBytes?: number | undefined;
}

/** Handles one `POST /v1/chat/completions`. */
export async function createCompletion(c: Context<AppEnv>, deps: SurfaceDeps, options: ChatOptions): Promise<Response> {
  const { request, ignoredParams } = parseChatCompletionRequest(await readJson(c));
  const input = toTurnInput(request, { maxImageBytes: options.maxImageBytes });
  const id = `chatcmpl-${deps.newId()}`;
  const created = Math.floor(deps.now() / 1000);
  const reasoning = input.request.options.reasoning ? options.reasoningOutput : ("none" as const);
  return runSurface(
    c,
    deps,
    {
      request: input.request,
      ignoredParams,
      warnings: input.warnings,
      stream: input.stream,
      maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
      // Shown reasoning the client asked for (an effort), or reads in its content: the cap counts it.
      reasoningRequested: reasoning === "think-tags" || (reasoning !== "none" && request.reasoning_effort != null),
      stopSequences: input.stopSequences,
    },
    {
      translation: (turn) =>
        chatTranslation({ id, created, reasoning, model: turn.model, includeUsage: input.includeUsage }),
      wire: CHAT_WIRE,
    },
  );
}
