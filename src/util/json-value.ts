/** Any JSON value (a leaf type: the backend's tool schemas and the stores' stored responses both use it). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Whether `value` is an object that is not an array or null: a JSON object's shape, its fields not yet checked. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
