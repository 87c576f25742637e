/** Any JSON value (a leaf type: the backend's tool schemas and the stores' stored responses both use it). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
