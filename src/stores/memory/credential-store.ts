/** The in-memory {@link CredentialStore}: for tests and for hosts (the OpenCode plugin) that keep credentials themselves. */
import { credentialRecord } from "../credentials.js";
import type { CredentialStore, StoredCredentials } from "../types.js";

/** Creates the store, optionally holding `initial`. */
export function createMemoryCredentialStore(
  initial?: StoredCredentials,
  now: () => Date = () => new Date(),
): CredentialStore {
  let current = initial;
  return {
    location: "memory",
    async load() {
      return current;
    },
    async save(input) {
      current = credentialRecord(input, now());
      return current;
    },
    async clear() {
      const had = current !== undefined;
      current = undefined;
      return had;
    },
  };
}
