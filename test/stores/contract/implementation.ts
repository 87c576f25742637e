/**
 * The store contract: what each interface of src/stores/types.ts promises, as one set of cases that every
 * implementation runs (memory, file, Redis), the way connect-es runs one conformance suite against every transport.
 * An implementation joins by adding one line to ../contract.test.ts; the cases of each interface are in this folder.
 * Cases marked "durable" run for implementations whose data outlives the instance (file, Redis): `reopen` opens a
 * second instance on the storage of the last `open`.
 *
 * What stays in an implementation's own tests is what only it does: file modes and atomic renames, the file sweep's
 * logging and size cap, Redis key expiry and blob sharing, the memory index's LRU.
 */

/** One implementation of a store interface under test. */
export interface Implementation<S, O = Record<string, never>> {
  name: string;
  /** A new, empty store (its own directory or key namespace). */
  open(options: O): Promise<S>;
  /** Durable implementations: another instance on the storage of the last `open` (a restart, or a second instance). */
  reopen?(options: O): Promise<S>;
}
