/**
 * Whether two objects share V8's hidden class (map). Thousands of parked turns each keep a few small objects; one
 * made so that every instance gets a hidden class of its own (keys added to a spread copy, for one) costs each of
 * them a map and its descriptors besides the object. Uses V8's `%HaveSameMap`, compiled in a fresh context while
 * `--allow-natives-syntax` is on, so the tests need no node flags.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export function hiddenClassCheck(): (a: object, b: object) => boolean {
  setFlagsFromString("--allow-natives-syntax");
  try {
    const same = runInNewContext("(a, b) => %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
    // Called once while the flag is on: V8 compiles a function's body on its first call.
    same({}, {});
    return same;
  } finally {
    setFlagsFromString("--no-allow-natives-syntax");
  }
}
