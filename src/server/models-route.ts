/**
 * `GET /v1/models` and `GET /v1/models/{id}`: the models Cursor lists, their built-in aliases (`auto`) and the user's
 * model aliases (`--model-alias NAME=ID`, with `resolves_to` naming the Cursor model). OpenAI-shaped, or Anthropic's
 * shape when the request carries `anthropic-version` (Claude Code lists models that way), paged by Anthropic's
 * `limit` / `after_id` / `before_id`; errors follow the same choice. Its own sub-app, like the API surfaces.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { ModelInfo } from "../backend/types.js";
import type { AppEnv } from "../surfaces/kit/access-log.js";
import type { AppDeps } from "../surfaces/kit/deps.js";
import { type OpenAIModel, toOpenAIModel, toOpenAIModelList } from "../surfaces/kit/model-list.js";
import type { ModelAlias } from "../surfaces/kit/model-names.js";
import { openAIErrorResponse } from "../surfaces/kit/openai-error.js";
import type { Principal } from "../surfaces/kit/principal.js";
import { anthropicErrorResponse } from "../surfaces/messages/error-body.js";
import { pageAnthropicModels, toAnthropicModelList } from "../surfaces/messages/models.js";
import { ProxyError } from "../util/errors.js";

/** A `/v1/models` entry for a user alias. */
export type AliasModel = OpenAIModel & { resolves_to: string };

/** Whether the request's principal (if any) may use a model: its own check, as a predicate. */
function allowedBy(principal: Principal | undefined): (requested: string, resolved: string) => boolean {
  if (principal === undefined) return () => true;
  return (requested, resolved) => {
    try {
      principal.checkModel(requested, resolved);
      return true;
    } catch {
      return false;
    }
  };
}

const wantsAnthropic = (c: Context) => c.req.header("anthropic-version") !== undefined;

/** The alias entries: the target's metadata under the alias's name (a target Cursor does not list: bare facts). */
export function aliasModels(
  aliases: readonly ModelAlias[],
  models: readonly ModelInfo[],
  ownedBy: string,
  created: number,
): AliasModel[] {
  return aliases.map(({ name, target }) => {
    const info = models.find((model) => model.id.toLowerCase() === target.toLowerCase()) ?? {
      id: target,
      displayName: target,
      aliases: [],
      reasoning: false,
      maxMode: false,
      vision: false,
    };
    return { ...toOpenAIModel(info, ownedBy, created), id: name, aliases: [], resolves_to: info.id };
  });
}

/** The models sub-app, mounted under /v1. */
export function createModelsApp(
  deps: AppDeps,
  aliases: readonly ModelAlias[],
  guards: readonly MiddlewareHandler<AppEnv>[],
): Hono<AppEnv> {
  const ownedBy = deps.options.upstream === "emulator" ? "cursor-emulator" : "cursor";
  const app = new Hono<AppEnv>();
  for (const guard of guards) app.use("/models/*", guard);
  // With a virtual key limited to some models (the gateway's principal), only those are listed; a key bound to a
  // named account lists that account's models (issue #29).
  const list = async (c: Context<AppEnv>, created: number) => {
    const principal = c.get("principal");
    const mayUse = allowedBy(principal);
    const models = (await deps.engine.listModels(c.req.raw.signal, principal?.account)).filter((model) =>
      mayUse(model.id, model.id),
    );
    const names = new Set(aliases.map((alias) => alias.name.toLowerCase()));
    const own = toOpenAIModelList(models, ownedBy, created).filter((model) => !names.has(model.id.toLowerCase()));
    const aliased = aliasModels(aliases, models, ownedBy, created).filter((model) =>
      mayUse(model.id, model.resolves_to),
    );
    return { models, aliased, all: [...own, ...aliased] };
  };
  app.get("/models", async (c) => {
    const created = Math.floor(deps.now() / 1000);
    const { models, aliased, all } = await list(c, created);
    if (!wantsAnthropic(c)) return c.json({ object: "list", data: all });
    const createdAt = new Date(deps.now()).toISOString();
    const data = [
      ...toAnthropicModelList(models, createdAt).data,
      ...aliased.map((alias) => ({
        type: "model" as const,
        id: alias.id,
        display_name: `${alias.id} → ${alias.resolves_to}`,
        created_at: createdAt,
        max_input_tokens: alias.context_window,
      })),
    ];
    const { limit, after_id, before_id } = c.req.query();
    return c.json(pageAnthropicModels(data, { limit, after_id, before_id }));
  });
  app.get("/models/:id{.+}", async (c) => {
    const id = c.req.param("id");
    const { all } = await list(c, Math.floor(deps.now() / 1000));
    const model = all.find((m) => m.id === id);
    const principal = c.get("principal");
    if (!model && principal !== undefined) {
      // Listed for others, or not at all: the key's own answer names the model (403) either way it may not use.
      principal.checkModel(id, id);
    }
    if (!model) {
      throw new ProxyError("not_found", `The model \`${id}\` does not exist.`, {
        param: "model",
        detail: "model_not_found",
      });
    }
    if (wantsAnthropic(c)) {
      const createdAt = new Date(deps.now()).toISOString();
      const { id, display_name, context_window } = model;
      return c.json({ type: "model", id, display_name, created_at: createdAt, max_input_tokens: context_window });
    }
    return c.json(model);
  });
  app.onError((error, c) => {
    // A virtual key's holder is a team member: no operator command in its messages (kit/error-policy.ts).
    const context = { requestId: c.get("log")?.requestId, remote: c.get("principal") !== undefined };
    return wantsAnthropic(c) ? anthropicErrorResponse(error, context) : openAIErrorResponse(error, context);
  });
  return app;
}
