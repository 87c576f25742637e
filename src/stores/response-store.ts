/**
 * The response store as the Responses surface and server/app.ts import it (their imports move to ./types.js and
 * ./memory/ with the request-kit work on the surfaces; this module goes then).
 */
export { createMemoryResponseStore } from "./memory/response-store.js";
export type { ResponseStore, ResponseStoreOptions, StoredResponse } from "./types.js";
