/**
 * `response_format` cannot be enforced: Cursor's agent API has no structured-output mode. JSON output is approximated
 * with the kit's instruction (kit/json-output.ts) and reported in `x-cursor-bridge-warnings`; nothing validates the
 * model's output. (`stop` is honoured by the kit: stop-sequences.ts.)
 */
import { type JsonOutputFormat, jsonOutputInstruction, jsonOutputWarning } from "../kit/json-output.js";
import type { ResponseFormat } from "./request.js";

/** The instruction and warnings for a request's `response_format`. */
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

/** Builds the instruction that approximates `response_format`, and the warning that says so. */
export function outputConstraints(format: ResponseFormat | null | undefined): OutputConstraints {
  const warnings: string[] = [];
  let instruction: string | undefined;
  const json = toJsonOutput(format);
  if (json !== undefined) {
    instruction = jsonOutputInstruction(json);
    warnings.push(jsonOutputWarning("response_format", json));
  }
  return { instruction, warnings };
}
