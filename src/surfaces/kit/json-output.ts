/**
 * Structured output, as each door asks for it (chat `response_format`, Responses `text.format`, Messages
 * `output_config.format`): Cursor's agent API has no structured-output mode, so every door approximates it with the
 * same instruction, kept with the system instructions (never part of the conversation's history key) and reported in
 * `x-cursor-bridge-warnings`. Nothing validates the model's output.
 */

/** Any JSON object, or a JSON value matching a schema (`name` and `description` where the door has them). */
export type JsonOutputFormat =
  | { type: "json_object" }
  | { type: "json_schema"; name?: string | undefined; description?: string | null | undefined; schema: unknown };

const ONLY_JSON = "Output only the JSON itself: no explanation before or after it, and no Markdown code fences.";

/** The instruction that asks the model for this format. */
export function jsonOutputInstruction(format: JsonOutputFormat): string {
  if (format.type === "json_object") return `Respond with a single valid JSON object. ${ONLY_JSON}`;
  const named = format.name ? ` named "${format.name}"` : "";
  const about = format.description ? ` (${format.description})` : "";
  return (
    `Respond with a single JSON value${named}${about} that conforms to this JSON Schema:\n` +
    `${JSON.stringify(format.schema ?? {})}\n${ONLY_JSON}`
  );
}

/** The warning that says how `field` (the door's name for the option) was honoured. */
export function jsonOutputWarning(field: string, format: JsonOutputFormat): string {
  return format.type === "json_object"
    ? `${field} json_object is approximated with an instruction; the output is not validated.`
    : `${field} json_schema is approximated with an instruction; the output is not validated against the schema.`;
}
