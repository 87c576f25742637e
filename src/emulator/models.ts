/**
 * The emulator's model list (cursor-protocol.md §6): ids in Cursor's naming pattern
 * `<family>-<version>[-<effort>][-thinking]`, `default` standing for Auto, `thinking_details` on reasoning models.
 * Context windows are not part of ModelDetails on the wire; the emulator uses them for `token_details.max_tokens`.
 */
import { create } from "@bufbuild/protobuf";
import { type ModelDetails, ModelDetailsSchema } from "../gen/agent/v1/models_pb.js";

interface ModelEntry {
  id: string;
  name: string;
  short: string;
  thinking: boolean;
  contextWindow: number;
  aliases: string[];
}

const MODELS: readonly ModelEntry[] = [
  { id: "default", name: "Auto", short: "Auto", thinking: false, contextWindow: 200_000, aliases: ["auto"] },
  { id: "composer-1", name: "Composer 1", short: "Composer", thinking: false, contextWindow: 200_000, aliases: [] },
  {
    id: "claude-4.5-sonnet",
    name: "Claude 4.5 Sonnet",
    short: "Sonnet 4.5",
    thinking: false,
    contextWindow: 200_000,
    aliases: ["sonnet-4.5"],
  },
  {
    id: "claude-4.5-sonnet-thinking",
    name: "Claude 4.5 Sonnet Thinking",
    short: "Sonnet 4.5 Thinking",
    thinking: true,
    contextWindow: 200_000,
    aliases: ["sonnet-4.5-thinking"],
  },
  { id: "gpt-5.2", name: "GPT-5.2", short: "GPT-5.2", thinking: true, contextWindow: 272_000, aliases: [] },
  {
    id: "gpt-5.2-codex-high",
    name: "GPT-5.2 Codex High",
    short: "Codex High",
    thinking: true,
    contextWindow: 272_000,
    aliases: [],
  },
  {
    id: "gemini-3-pro",
    name: "Gemini 3 Pro",
    short: "Gemini 3 Pro",
    thinking: true,
    contextWindow: 1_000_000,
    aliases: [],
  },
];

function toDetails(entry: ModelEntry): ModelDetails {
  return create(ModelDetailsSchema, {
    modelId: entry.id,
    displayModelId: entry.id,
    displayName: entry.name,
    displayNameShort: entry.short,
    aliases: entry.aliases,
    ...(entry.thinking ? { thinkingDetails: {} } : {}),
  });
}

/** Every usable model, Auto first. */
export function usableModels(): ModelDetails[] {
  return MODELS.map(toDetails);
}

/** The CLI's default model: Auto (`default`, §6). */
export function defaultModel(): ModelDetails {
  return toDetails(MODELS[0] as ModelEntry);
}

/** The entry for a model id or alias, if the emulator knows it. */
export function findModel(id: string): { id: string; contextWindow: number } | undefined {
  const entry = MODELS.find((m) => m.id === id || m.aliases.includes(id));
  return entry === undefined ? undefined : { id: entry.id, contextWindow: entry.contextWindow };
}
