/**
 * `response_format` and `stop` cannot be enforced: Cursor's agent API has no structured-output mode and no stop
 * sequences. JSON output is approximated with the kit's instruction (kit/json-output.ts) and both are reported in
 * `x-cursor-bridge-warnings`; nothing validates or trims the model's output.
 */
import { type JsonOutputFormat, jsonOutputInstruction, jsonOutputWarning } from "../kit/json-output.js";
import type { ResponseFormat } from "./request.js";

/** The instruction and warnings for a request's `response_format` and `stop`. */
export interface OutputConstraints {
  instruction: string | undefined;
  warnings: string[];
}

function toJsonOutput(format: ResponseFormat | null | undefined): JsonOutputFormat | undefined {
  if (format?.type === "json_object") return { type: "json_object" };
  if (format?.type !== "json_schema") return undefined;
  const { name, description, schema } = format.json_schema;
  return { type: "json_schema", name, description, schema };
}

/** Builds the instruction that approximates `response_format`, and the warnings for what stays unenforced. */
export function outputConstraints(
  format: ResponseFormat | null | undefined,
  stop: string | readonly string[] | null | undefined,
): OutputConstraints {
  const warnings: string[] = [];
  let instruction: string | undefined;
  const json = toJsonOutput(format);
  if (json !== undefined) {
    instruction = jsonOutputInstruction(json);
    warnings.push(jsonOutputWarning("response_format", json));
  }
  const stops = stop == null ? [] : typeof stop === "string" ? [stop] : stop;
  if (stops.length > 0) warnings.push("stop sequences are not supported by the Cursor backend; the output is not cut.");
  return { instruction, warnings };
}
