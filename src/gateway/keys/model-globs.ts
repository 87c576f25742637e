/** Model globs of a key (`gpt-5*`, `claude-4.?-sonnet`): `*` any run of characters, `?` one; case-insensitive. */

const cache = new Map<string, RegExp>();

function regexOf(glob: string): RegExp {
  let regex = cache.get(glob);
  if (regex === undefined) {
    const body = glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    regex = new RegExp(`^${body}$`, "i");
    if (cache.size < 1000) cache.set(glob, regex);
  }
  return regex;
}

/** True when `id` matches one of `globs`. */
export function matchesAnyGlob(globs: readonly string[], id: string): boolean {
  return globs.some((glob) => regexOf(glob).test(id));
}
