/** Names a field of a request body the way every surface's errors name it. */

/** `["messages", 1, "content", 0, "type"]` → `messages[1].content[0].type`. */
export function formatParamPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}
