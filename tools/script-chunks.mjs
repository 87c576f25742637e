/**
 * The bundle as scripts (a step of tools/build.mjs): each JavaScript file of dist/ (dist/main.js and its chunks, ES
 * modules) also as a script in dist/script/ (same relative path), which tools/script-loader.mjs compiles with
 * `vm.Script` and a V8 code cache. Node 20 has no code cache for ES modules (no `module.enableCompileCache`; a
 * `vm.SourceTextModule` needs a node flag), so every start parsed and compiled the bundle, and every function it ran,
 * from source: about 35 ms of CPU before serve's first chat answer. A script can consume the bytecode a previous run
 * produced instead.
 *
 * Each script is the module as esbuild's CommonJS transform writes it (imports become `require` calls, exports getters
 * on `module.exports`, so bindings stay live), wrapped in a function of the loader's `exports`, `require`, `module`,
 * `__bridgeImport` (what `import()` of a chunk becomes) and `__bridgeMetaUrl` (what `import.meta.url` becomes: the ES
 * module's own URL, so paths relative to it resolve as before). Its first line names a hash of the rest, which keys
 * its code cache (V8 checks only the source's length). Nothing is written when a module cannot be transformed (for
 * example a top-level await): then dist/script/ is absent and bin/ loads the ES modules as before.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { SCRIPT_HEADER } from "./script-loader.mjs";

/** The line tools/build.mjs puts before every output file (for bundled CommonJS code's `require`). */
export const ESM_BANNER =
  'import { createRequire as __bridgeRequire } from "node:module"; const require = __bridgeRequire(import.meta.url);';

/** The parameters a script's function takes, in order (tools/script-loader.mjs passes them). */
export const SCRIPT_PARAMETERS = ["exports", "require", "module", "__bridgeImport", "__bridgeMetaUrl"];

/** `import("./x.js")` with a relative specifier, as esbuild writes the split points. */
const DYNAMIC_IMPORT = /\bimport\((["'])(\.\.?\/[^"'\n]+)\1\)/g;

/**
 * The script versions of the JavaScript files in `outputFiles` (esbuild's output objects, or `{ path, text }`), as
 * `{ path, text }` under `<distDir>/script/`; an empty list when one of them cannot be made a script.
 */
export function scriptVersions({ transform, outputFiles, distDir }) {
  const modules = outputFiles.filter((file) => file.path.endsWith(".js"));
  const known = new Set(modules.map((file) => file.path));
  const scripts = [];
  for (const file of modules) {
    const text = file.text.startsWith(ESM_BANNER) ? file.text.slice(ESM_BANNER.length) : file.text;
    let code;
    try {
      code = transform(text, {
        format: "cjs",
        platform: "node",
        target: "node20",
        logLevel: "silent",
        define: { "import.meta.url": "__bridgeMetaUrl" },
      }).code;
    } catch {
      return [];
    }
    if (/\bimport\.meta\b/.test(code)) return [];
    // A split point loads its chunk through the loader; an import() of anything else (a file URL, a package) stays
    // Node's. A match that names no output file (a doc comment's example) is left as it is.
    code = code.replace(DYNAMIC_IMPORT, (whole, _quote, specifier) =>
      known.has(path.resolve(path.dirname(file.path), specifier))
        ? `__bridgeImport(${JSON.stringify(specifier)})`
        : whole,
    );
    const body = `(function (${SCRIPT_PARAMETERS.join(", ")}) {"use strict";\n${code}\n})\n`;
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 32);
    scripts.push({
      path: path.join(distDir, "script", path.relative(distDir, file.path)),
      text: `${SCRIPT_HEADER}${hash}\n${body}`,
    });
  }
  return scripts;
}
