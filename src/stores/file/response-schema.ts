/**
 * What a stored response file holds (response-store.ts), checked on every read: the store loads this module, and
 * zod with it, on its first read rather than when a server starts.
 */
import * as z from "zod";
import type { JsonValue } from "../../util/json-value.js";

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

/** A stored response file of format `version`. */
export function storedFileSchema(version: number) {
  return z.object({
    version: z.literal(version),
    id: z.string(),
    response: z.record(z.string(), jsonValue),
    input: z.array(jsonValue),
    storedAt: z.number(),
    owner: z.string().optional(),
  });
}
