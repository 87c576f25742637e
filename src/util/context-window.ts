/**
 * Context windows by model family. Cursor's model list carries none (docs/protocol.md §6: "clients hard-code them"),
 * so this table is the one place that knows them: `/v1/models` reports it and the backend uses it to tell a
 * context overflow from a model the plan cannot use.
 */
const CONTEXT_WINDOWS: ReadonlyArray<[RegExp, number]> = [
  [/^gemini-/, 1_000_000],
  [/^gpt-5/, 272_000],
  [/^claude-/, 200_000],
  [/^grok-/, 256_000],
  [/^composer-/, 200_000],
];

/** The window assumed for a family the table does not know. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;

/** Context window for a Cursor model id (200k when the family is unknown). */
export function contextWindowFor(modelId: string): number {
  return CONTEXT_WINDOWS.find(([pattern]) => pattern.test(modelId))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}
