/**
 * Keeps V8's young generation at its initial size while the process starts. Nearly everything allocated then (the
 * bundle's code, protobuf registries, schemas) lives as long as the process, so growing the young generation for it
 * saves no work, yet V8 grows it to its maximum (two 16 MB semi-spaces) on that survival and keeps it committed: about
 * 14 MB of RSS in an idle server. bin/cursor-bridge.js holds the growth (semi-space growth factor 1) before it loads
 * the bundle, unless the user tunes the semi-space; a long-running command releases it once it listens, so request
 * load grows the young generation as usual. While the flag is set, V8 rejects the code cache Node's own modules are
 * compiled from, so bin/ loads the ones a server's start needs before it sets it (docs/performance.md, the start).
 */
import { setFlagsFromString } from "node:v8";

/** The mark bin/cursor-bridge.js leaves on `globalThis` when it held the growth. */
export const YOUNG_GENERATION_HELD = Symbol.for("cursor-bridge.young-generation-held");

/** V8's default `--semi-space-growth-factor`. */
const DEFAULT_GROWTH_FACTOR = 2;

/** Lets the young generation grow again, if bin/ held it (otherwise does nothing). */
export function releaseYoungGeneration(): void {
  const marks = globalThis as unknown as Record<symbol, unknown>;
  if (marks[YOUNG_GENERATION_HELD] !== true) return;
  marks[YOUNG_GENERATION_HELD] = false;
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
}
