/**
 * The directory of a file store that writes on demand (the conversation log's segments, stored responses): made on
 * the first write rather than at start, and once, 0700 and chmod'ed too, since `mkdir`'s mode applies only to a
 * directory it creates. `forget()` makes the next `ready()` make it again (it was removed since).
 */
import { chmod } from "node:fs/promises";
import { makeDir } from "../../util/make-dir.js";

export interface StoreDir {
  /** Resolves once the directory exists, 0700; the first call makes it, the others share that. */
  ready(): Promise<void>;
  forget(): void;
}

export function storeDir(dir: string): StoreDir {
  let made: Promise<void> | undefined;
  return {
    ready() {
      made ??= (async () => {
        await makeDir(dir);
        await chmod(dir, 0o700);
      })();
      return made;
    },
    forget() {
      made = undefined;
    },
  };
}
