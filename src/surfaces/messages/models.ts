/** Cursor model metadata → Anthropic's `GET /v1/models` list shape (served when the request has `anthropic-version`). */
import type { ModelInfo } from "../../backend/types.js";
import type { AnthropicModel, AnthropicModelList } from "./wire.js";

/** `createdAt`: RFC 3339 time stamped on every entry (Cursor reports no release dates). */
export function toAnthropicModelList(models: readonly ModelInfo[], createdAt: string): AnthropicModelList {
  const data: AnthropicModel[] = models.map((model) => ({
    type: "model",
    id: model.id,
    display_name: model.displayName,
    created_at: createdAt,
  }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
