/**
 * The emulator's model list (docs/protocol.md §6): ids in Cursor's naming pattern
 * `<family>-<version>[-<effort>][-thinking]`, `default` standing for Auto, `thinking_details` on reasoning models.
 * Context windows are not part of ModelDetails on the wire; the emulator uses them for `token_details.max_tokens`.
 */
import { create } from "@bufbuild/protobuf";
import { type ModelDetails, ModelDetailsSchema } from "../gen/agent/v1/models_pb.js";
import { type AvailableModelsResponse, AvailableModelsResponseSchema } from "../gen/aiserver/v1/ai_service_pb.js";

interface ModelEntry {
  id: string;
  name: string;
  short: string;
  thinking: boolean;
  /** Offered in Max mode too (ModelDetails.max_mode). */
  maxMode: boolean;
  /** Accepts image input (AvailableModels.supports_images, §4.11 of the reference). */
  images: boolean;
  contextWindow: number;
  aliases: string[];
}

type Spec = [id: string, name: string, short: string, flags: string, contextWindow: number, aliases?: string[]];

/**
 * Today's catalogue (docs/protocol.md §6 plus the ids earlier releases listed). Flags: `t` thinking,
 * `m` max mode, `i` image input.
 */
const SPECS: readonly Spec[] = [
  ["default", "Auto", "Auto", "i", 200_000, ["auto"]],
  ["composer-1", "Composer 1", "Composer", "i", 200_000],
  ["composer-1.5", "Composer 1.5", "Composer 1.5", "ti", 200_000],
  ["claude-4.5-sonnet", "Claude 4.5 Sonnet", "Sonnet 4.5", "mi", 200_000, ["sonnet-4.5"]],
  [
    "claude-4.5-sonnet-thinking",
    "Claude 4.5 Sonnet Thinking",
    "Sonnet 4.5 Thinking",
    "tmi",
    200_000,
    ["sonnet-4.5-thinking"],
  ],
  ["claude-4.6-sonnet-medium", "Claude 4.6 Sonnet", "Sonnet 4.6", "tmi", 200_000, ["sonnet-4.6"]],
  ["claude-4.6-opus-high", "Claude 4.6 Opus", "Opus 4.6", "tmi", 200_000, ["opus-4.6"]],
  ["gpt-5.2", "GPT-5.2", "GPT-5.2", "tmi", 272_000],
  ["gpt-5.2-codex", "GPT-5.2 Codex", "Codex 5.2", "tmi", 272_000],
  ["gpt-5.2-codex-high", "GPT-5.2 Codex High", "Codex High", "tmi", 272_000],
  ["gpt-5.3-codex", "GPT-5.3 Codex", "Codex 5.3", "tmi", 272_000],
  ["gpt-5.3-codex-spark-preview", "GPT-5.3 Codex Spark (Preview)", "Codex Spark", "t", 128_000],
  ["gpt-5.4-medium", "GPT-5.4", "GPT-5.4", "tmi", 272_000],
  ["gemini-3-pro", "Gemini 3 Pro", "Gemini 3 Pro", "tmi", 1_000_000],
  ["gemini-3.1-pro", "Gemini 3.1 Pro", "Gemini 3.1 Pro", "tmi", 1_000_000],
  ["grok-code-fast-1", "Grok Code Fast 1", "Grok Code", "", 256_000],
];

const MODELS: readonly ModelEntry[] = SPECS.map(([id, name, short, flags, contextWindow, aliases = []]) => ({
  id,
  name,
  short,
  thinking: flags.includes("t"),
  maxMode: flags.includes("m"),
  images: flags.includes("i"),
  contextWindow,
  aliases,
}));

function toDetails(entry: ModelEntry): ModelDetails {
  return create(ModelDetailsSchema, {
    modelId: entry.id,
    displayModelId: entry.id,
    displayName: entry.name,
    displayNameShort: entry.short,
    aliases: entry.aliases,
    ...(entry.thinking ? { thinkingDetails: {} } : {}),
    ...(entry.maxMode ? { maxMode: true } : {}),
  });
}

/** Every usable model, Auto first. */
export function usableModels(): ModelDetails[] {
  return MODELS.map(toDetails);
}

/** `AiService/AvailableModels`: the legacy IDE list, the one that says which models accept images. */
export function availableModels(): AvailableModelsResponse {
  return create(AvailableModelsResponseSchema, {
    modelNames: MODELS.map((m) => m.id),
    models: MODELS.map((m) => ({
      name: m.id,
      defaultOn: true,
      supportsAgent: true,
      supportsThinking: m.thinking,
      supportsImages: m.images,
      supportsMaxMode: m.maxMode,
      supportsNonMaxMode: true,
      contextTokenLimit: m.contextWindow,
      clientDisplayName: m.name,
      serverModelName: m.id,
    })),
  });
}

/** The CLI's default model: Auto (`default`, §6). */
export function defaultModel(): ModelDetails {
  return toDetails(MODELS[0] as ModelEntry);
}

/** The entry for a model id or alias, if the emulator knows it. */
export function findModel(id: string): { id: string; contextWindow: number; images: boolean } | undefined {
  const entry = MODELS.find((m) => m.id === id || m.aliases.includes(id));
  return entry === undefined ? undefined : { id: entry.id, contextWindow: entry.contextWindow, images: entry.images };
}
