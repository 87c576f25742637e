/**
 * Cursor's models for OpenCode. The list comes from the bridge child's `GET /v1/models` (Cursor's `GetUsableModels`
 * plus the bridge's context-window, reasoning and image facts), so the plugin holds no second copy of that logic. The
 * last list seen is cached on disk per Cursor API URL, so OpenCode's startup never waits long for discovery.
 */
import { randomUUID } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { makeDir } from "../util/make-dir.js";
import { effortTiersOf, effortVariants, siblingTiers } from "../util/model-efforts.js";
import type { CatalogModel, ConfigModel } from "./types.js";

/** The fields of a bridge `/v1/models` entry the plugin uses. */
export interface BridgeModel {
  id: string;
  display_name: string;
  context_window: number;
  reasoning: boolean;
  tool_calls: boolean;
  vision: boolean;
  /**
   * The effort tiers `reasoning_effort` chooses between on this model, each an OpenCode variant: a parameterised
   * base model's, or the tiers a flat id has a listed sibling id for (`gpt-5.3-codex` → `gpt-5.3-codex-high`…).
   */
  efforts?: string[];
}

/** OpenCode needs an output limit; Cursor reports none and the bridge ignores `max_tokens`. */
export const OUTPUT_LIMIT = 32_000;

function isBridgeModel(value: unknown): value is BridgeModel {
  if (typeof value !== "object" || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    typeof m.id === "string" &&
    m.id !== "" &&
    typeof m.display_name === "string" &&
    typeof m.context_window === "number" &&
    typeof m.reasoning === "boolean" &&
    typeof m.tool_calls === "boolean" &&
    typeof m.vision === "boolean"
  );
}

/** A `cursor_bridge` object of a variant id (`{base, params}`): its tier is fixed by the id. */
function isVariantEntry(entry: unknown): boolean {
  const extension = (entry as { cursor_bridge?: unknown }).cursor_bridge;
  return typeof extension === "object" && extension !== null && "params" in extension;
}

/** The well-formed entries of a `/v1/models` body (anything else is dropped). */
export function parseModelList(body: unknown): BridgeModel[] {
  const data = typeof body === "object" && body !== null ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) return [];
  const entries = data.filter(isBridgeModel);
  const listed = new Set(entries.map((entry) => entry.id.toLowerCase()));
  return entries.map((entry) => {
    const { id, display_name, context_window, reasoning, tool_calls, vision } = entry;
    // A fresh list carries a base's tiers in `cursor_bridge`; the cache holds them as `efforts`.
    const cached = (entry as { efforts?: unknown }).efforts;
    const efforts = Array.isArray(cached) ? effortTiersOf({ parameters: [{ id: "effort", values: cached }] }) : [];
    const own = efforts.length > 0 ? efforts : effortTiersOf((entry as { cursor_bridge?: unknown }).cursor_bridge);
    // A flat id: the tiers the bridge runs it at through a sibling id (model-selection.ts `effortSibling`).
    const tiers = own.length > 0 || isVariantEntry(entry) ? own : siblingTiers(id, listed);
    const model: BridgeModel = { id, display_name, context_window, reasoning, tool_calls, vision };
    if (tiers.length > 0) model.efforts = tiers;
    return model;
  });
}

/** Reads the list from a running bridge. @throws on a non-200 answer, a bad body or the timeout. */
export async function fetchModels(baseURL: string, apiKey: string, timeoutMs: number): Promise<BridgeModel[]> {
  const response = await fetch(`${baseURL}/models`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`cursor-bridge answered ${response.status} to GET /v1/models`);
  }
  const models = parseModelList(await response.json());
  if (models.length === 0) throw new Error("cursor-bridge listed no models");
  return models;
}

/** A config-block model entry (`provider.cursor.models[id]`). */
export function toConfigModel(model: BridgeModel): ConfigModel {
  return {
    name: model.display_name === "" ? model.id : model.display_name,
    tool_call: model.tool_calls,
    reasoning: model.reasoning,
    attachment: model.vision,
    temperature: false,
    limit: { context: model.context_window, output: OUTPUT_LIMIT },
    modalities: { input: model.vision ? ["text", "image"] : ["text"], output: ["text"] },
    // OpenCode's variant picker and `--variant`: one per effort tier that chooses something, OpenCode's own others
    // (low/medium/high on any reasoning model, an id with the tier in it too, where they change nothing) disabled.
    ...variantsOf(model),
  };
}

function variantsOf(model: BridgeModel): { variants?: Record<string, Record<string, unknown>> } {
  const variants = effortVariants(model.efforts, { disableOwn: model.reasoning });
  return Object.keys(variants).length === 0 ? {} : { variants };
}

/** Config entries for a list; `existing` (the user's own entries) win over generated ones. */
export function configModels(
  models: readonly BridgeModel[],
  existing: Readonly<Record<string, ConfigModel>> = {},
): Record<string, ConfigModel> {
  const generated = Object.fromEntries(models.map((m) => [m.id, toConfigModel(m)]));
  return { ...generated, ...existing };
}

/** A catalog entry for the `provider.models` hook. */
export function toCatalogModel(model: BridgeModel, providerID: string, npm: string): CatalogModel {
  const none = { text: false, audio: false, image: false, video: false, pdf: false };
  return {
    id: model.id,
    providerID,
    api: { id: model.id, url: "", npm },
    name: model.display_name === "" ? model.id : model.display_name,
    capabilities: {
      temperature: false,
      reasoning: model.reasoning,
      attachment: model.vision,
      toolcall: model.tool_calls,
      input: { ...none, text: true, image: model.vision },
      output: { ...none, text: true },
      interleaved: false,
    },
    cost: { input: 0, output: 0, cache: { read: 0, write: 0 } },
    limit: { context: model.context_window, output: OUTPUT_LIMIT },
    status: "active",
    options: {},
    headers: {},
    release_date: "",
    // Given (empty too), so OpenCode adds none of its own (see toConfigModel).
    variants: effortVariants(model.efforts, { disableOwn: false }),
  };
}

/** The on-disk cache of the last list per Cursor API URL. */
export interface ModelCache {
  read(apiUrl: string): Promise<{ savedAt: number; models: BridgeModel[] } | undefined>;
  write(apiUrl: string, models: readonly BridgeModel[], now: number): Promise<void>;
}

type CacheFile = Record<string, { savedAt: number; models: unknown }>;

async function readCacheFile(path: string): Promise<CacheFile> {
  try {
    const value: unknown = JSON.parse(await readFile(path, "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as CacheFile) : {};
  } catch {
    return {};
  }
}

/** A JSON file cache (written atomically; a missing or broken file is an empty cache). */
export function createModelCache(path: string): ModelCache {
  return {
    async read(apiUrl) {
      const entry = (await readCacheFile(path))[apiUrl];
      if (entry === undefined || typeof entry.savedAt !== "number") return undefined;
      const models = parseModelList({ data: entry.models });
      return models.length === 0 ? undefined : { savedAt: entry.savedAt, models };
    },
    async write(apiUrl, models, now) {
      const file = await readCacheFile(path);
      file[apiUrl] = { savedAt: now, models };
      await makeDir(dirname(path));
      const temp = `${path}.${randomUUID()}.tmp`;
      await writeFile(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
      await rename(temp, path);
    },
  };
}
