/**
 * `response_format` and `stop` cannot be enforced: Cursor's agent API has no structured-output mode and no stop
 * sequences. JSON output is approximated with an instruction (kept with the system instructions, so it is not part of
 * the conversation's history key) and both are reported in `x-cursor-bridge-warnings`; nothing validates or trims
 * the model's output.
 */
import type { ResponseFormat } from "./request.js";

/** The instruction and warnings for a request's `response_format` and `stop`. */
export interface OutputConstraints {
  instruction: string | undefined;
  warnings: string[];
}

const ONLY_JSON = "Output only the JSON itself: no explanation before or after it, and no Markdown code fences.";

/** Builds the instruction that approximates `response_format`, and the warnings for what stays unenforced. */
export function outputConstraints(
  format: ResponseFormat | null | undefined,
  stop: string | readonly string[] | null | undefined,
): OutputConstraints {
  const warnings: string[] = [];
  let instruction: string | undefined;
  if (format?.type === "json_object") {
    instruction = `Respond with a single valid JSON object. ${ONLY_JSON}`;
    warnings.push("response_format json_object is approximated with an instruction; the output is not validated.");
  } else if (format?.type === "json_schema") {
    const { name, description, schema } = format.json_schema;
    const about = description ? ` (${description})` : "";
    instruction =
      `Respond with a single JSON value named "${name}"${about} that conforms to this JSON Schema:\n` +
      `${JSON.stringify(schema ?? {})}\n${ONLY_JSON}`;
    warnings.push(
      "response_format json_schema is approximated with an instruction; the output is not validated against the schema.",
    );
  }
  const stops = stop == null ? [] : typeof stop === "string" ? [stop] : stop;
  if (stops.length > 0) warnings.push("stop sequences are not supported by the Cursor backend; the output is not cut.");
  return { instruction, warnings };
}
