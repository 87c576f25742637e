/**
 * What the Messages door does with a request (route.ts loads it on the door's first request, so a server no client
 * asks in Anthropic's format never compiles this code or builds its schemas): parse, translate to an engine request,
 * run it through the kit's runSurface (model names, engine, abort, log, headers), translate the events back; and the
 * token count.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Context } from "hono";
import type { AppEnv } from "../kit/access-log.js";
import { ImageBudget } from "../kit/image-input.js";
import { readJson } from "../kit/json-body.js";
import { runSurface, type ServedTurn } from "../kit/run-surface.js";
import type { SurfaceDeps } from "../kit/surface-app.js";
import { countInputTokens } from "./count-tokens.js";
import { messagesTranslation, messagesWire } from "./events.js";
import { parseCountTokensRequest, parseMessagesRequest } from "./parse.js";
import { toEngineRequest } from "./translate.js";
import type { CountTokensResponse } from "./wire.js";

/** Anthropic sends `ping` events every few seconds while the model is silent; so do we. */
export const PING_INTERVAL_MS = 5000;

/** Options of the Messages door. */
export interface MessagesOptions {
  /** Silence after which a streaming response gets a `ping` event. @default PING_INTERVAL_MS */
  pingIntervalMs?: number;
  /** Key of the thinking signatures; instances sharing a store derive the same one. @default random per process */
  signingKey?: Buffer | undefined;
  /** Total decoded image bytes accepted in one request. @default DEFAULT_MAX_IMAGE_BYTES (kit/image-input.ts, 15 MiB) */
  maxImageBytes?: number | undefined;
}

/** HMAC signer for thinking blocks: the bridge's own signatures are recognisable, and nothing else is claimed. */
function thinkingSigner(key: Buffer): (text: string) => string {
  return (text) => `cb1.${createHmac("sha256", key).update(text).digest("base64url")}`;
}

/** The Messages door's two handlers. */
export interface MessagesHandlers {
  messages(c: Context<AppEnv>): Promise<Response>;
  countTokens(c: Context<AppEnv>): Promise<Response>;
}

/** The handlers of one Messages sub-app. */
export function messagesHandlers(deps: SurfaceDeps, options: MessagesOptions): MessagesHandlers {
  const sign = thinkingSigner(options.signingKey ?? randomBytes(32));
  const wire = messagesWire(options.pingIntervalMs ?? PING_INTERVAL_MS);
  const images = () => new ImageBudget(options.maxImageBytes);
  return {
    async messages(c) {
      const beta = c.req.header("anthropic-beta");
      const { request: body, ignoredParams } = parseMessagesRequest(await readJson(c), { beta });
      const { request, warnings } = toEngineRequest(body, images(), beta);
      const translation = (turn: ServedTurn) => ({
        id: `msg_${deps.newId()}`,
        model: turn.model,
        reasoning: request.options.reasoning,
        sign,
        stopSequence: () => turn.stopSequence,
        // The request's one estimate, which costs no time before the first token (the exact o200k count of count_tokens would).
        inputEstimate: () => turn.inputTokens(),
      });
      const surfaceRequest = {
        request,
        ignoredParams,
        warnings,
        stream: body.stream === true,
        maxOutputTokens: body.max_tokens,
        // `thinking` enabled or adaptive: Anthropic's max_tokens includes the thinking.
        reasoningRequested: request.options.reasoning,
        stopSequences: body.stop_sequences ?? [],
      };
      return runSurface(c, deps, surfaceRequest, {
        translation: (turn) => messagesTranslation(translation(turn)),
        wire,
      });
    },
    async countTokens(c) {
      const { request: body } = parseCountTokensRequest(await readJson(c));
      const { request } = toEngineRequest(body, images());
      const result: CountTokensResponse = { input_tokens: await countInputTokens(request) };
      return c.json(result);
    },
  };
}
