import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** ../shared beside the repository (present in CI and on developer machines, absent in a user's clone). */
export const SHARED_DIR = fileURLToPath(new URL("../../../shared/", import.meta.url));
/** ../shared/vectors. */
export const VECTORS_DIR = fileURLToPath(new URL("../../../shared/vectors/", import.meta.url));
/** True when ../shared/vectors exists. */
export const HAS_VECTORS = existsSync(VECTORS_DIR);

/** Prints why a suite that needs ../shared is skipped (never skip silently). */
export function reportSharedSkip(suite: string): void {
  if (!HAS_VECTORS) console.warn(`[skip] ${suite}: ${VECTORS_DIR} is absent (a user's clone has no ../shared).`);
}
