/**
 * Merges esbuild's small shared chunks into one file (a step of tools/build.mjs). Code splitting gives every set of
 * entry points (dist/main.js and each module loaded with `import()`) that shares code a chunk of its own: 69 of the
 * 103 are under 8 KB, and serve's first answer loaded 40 of them. Each module Node loads costs a resolve, a module
 * job and a link (about 0.2 ms each, cold), more than parsing a few KB; one file costs that once.
 *
 * Only chunks that change no laziness are merged: a small shared chunk (never the target of an `import()`) whose
 * static imports are all loaded by dist/main.js itself, or are merged too. The merged file then imports nothing that
 * a start did not load already, so what it adds to a start is the small chunks' own code (parsed lazily by V8), and
 * the large lazy parts (zod, protobuf, the doors, the emulator) still load when they did. A chunk is left out when a
 * module the merged file imports imports it again (that would make a cycle through the merged file, in which a part
 * could run before what it needs). The merged file is bundled by esbuild from the chunks as built (so names never
 * collide and each part runs after what it imports), exports each chunk's exports under a prefix, and the importers'
 * import lines are rewritten to it.
 */
import { createHash } from "node:crypto";
import path from "node:path";

/** Chunks at most this large are merged. */
const SMALL_BYTES = 8192;

/**
 * Returns `outputFiles` (esbuild's, in memory) with the small chunks merged; `metafile` is the build's,
 * `root` its working directory.
 */
export async function mergeSmallChunks({ esbuild, outputFiles, metafile, root, distDir }) {
  const abs = (relative) => path.resolve(root, relative);
  const files = new Map(outputFiles.map((file) => [file.path, file]));
  const outputs = new Map(Object.entries(metafile.outputs).map(([relative, output]) => [abs(relative), output]));
  const staticImports = (file) =>
    (outputs.get(file)?.imports ?? [])
      .filter((entry) => entry.kind === "import-statement" && !entry.external)
      .map((entry) => abs(entry.path));
  const dynamicTargets = new Set();
  for (const output of outputs.values()) {
    for (const entry of output.imports) if (entry.kind === "dynamic-import") dynamicTargets.add(abs(entry.path));
  }
  const closure = (starts) => {
    const seen = new Set();
    const stack = [...starts];
    while (stack.length > 0) {
      const file = stack.pop();
      if (seen.has(file)) continue;
      seen.add(file);
      stack.push(...staticImports(file));
    }
    return seen;
  };
  const main = path.join(distDir, "main.js");
  const atStart = closure([main]);
  const merged = new Set(
    [...outputs.keys()].filter(
      (file) =>
        /^chunk-[^/\\]*\.js$/.test(path.basename(file)) &&
        path.dirname(file) === path.join(distDir, "chunks") &&
        !dynamicTargets.has(file) &&
        files.get(file) !== undefined &&
        files.get(file).contents.length <= SMALL_BYTES,
    ),
  );
  for (let changed = true; changed; ) {
    changed = false;
    for (const file of merged) {
      if (staticImports(file).some((dep) => !merged.has(dep) && !atStart.has(dep))) {
        merged.delete(file);
        changed = true;
      }
    }
    const outside = new Set([...merged].flatMap(staticImports).filter((dep) => !merged.has(dep)));
    for (const file of closure(outside)) {
      if (merged.has(file)) {
        merged.delete(file);
        changed = true;
      }
    }
  }
  if (merged.size < 2) return outputFiles;

  // The merged file: each chunk's exports re-exported as `c<index>_<name>`, bundled from the chunks as built.
  const members = [...merged].sort();
  const exportName = new Map(members.map((file, index) => [file, (name) => `c${index}_${name}`]));
  const entry = members
    .map((file) => {
      const names = outputs.get(file).exports;
      const specifier = `./${path.basename(file)}`;
      if (names.length === 0) return `import ${JSON.stringify(specifier)};`;
      const list = names.map((name) => `${name} as ${exportName.get(file)(name)}`).join(", ");
      return `export { ${list} } from ${JSON.stringify(specifier)};`;
    })
    .join("\n");
  const chunksDir = path.join(distDir, "chunks");
  const result = await esbuild({
    absWorkingDir: root,
    stdin: { contents: entry, resolveDir: chunksDir, sourcefile: "merged-chunks.js", loader: "js" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outfile: path.join(chunksDir, "merged.js"),
    sourcemap: "external",
    legalComments: "none",
    logLevel: "error",
    write: false,
    plugins: [
      {
        name: "built-chunks",
        setup(build) {
          build.onResolve({ filter: /.*/ }, (args) => {
            if (!args.path.startsWith(".")) return { path: args.path, external: true };
            const file = path.resolve(args.resolveDir, args.path);
            if (merged.has(file)) return { path: path.basename(file), namespace: "built-chunk" };
            return { path: `./${path.relative(chunksDir, file).split(path.sep).join("/")}`, external: true };
          });
          build.onLoad({ filter: /.*/, namespace: "built-chunk" }, (args) => {
            const file = path.join(chunksDir, args.path);
            const text = files.get(file).text;
            const map = files.get(`${file}.map`);
            // The chunk's own source map, inline, so the merged file's map points at src/ as the chunks' did.
            const inline =
              map === undefined
                ? ""
                : `\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(map.contents).toString("base64")}\n`;
            return {
              contents: text.replace(/\n\/\/# sourceMappingURL=[^\n]*\n?$/, "") + inline,
              resolveDir: chunksDir,
              loader: "js",
            };
          });
        },
      },
    ],
  });
  const code = result.outputFiles.find((file) => file.path.endsWith(".js"));
  const sourceMap = result.outputFiles.find((file) => file.path.endsWith(".map"));
  const hash = createHash("sha256").update(code.contents).digest("hex").slice(0, 8).toUpperCase();
  const mergedPath = path.join(chunksDir, `merged-${hash}.js`);
  const mergedText = code.text.replace(
    /\/\/# sourceMappingURL=merged\.js\.map\n?$/,
    `//# sourceMappingURL=${path.basename(mergedPath)}.map\n`,
  );
  const mapText = sourceMap.text;

  // Every other file's import lines of merged chunks now name the merged file.
  const rewrite = (file) => {
    const specifierOf = (target) => {
      const relative = path.relative(path.dirname(file.path), target).split(path.sep).join("/");
      return relative.startsWith(".") ? relative : `./${relative}`;
    };
    const mergedSpecifier = specifierOf(mergedPath);
    let text = file.text;
    for (const member of members) {
      const specifier = specifierOf(member);
      const quoted = JSON.stringify(specifier).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      const named = new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*${quoted};`, "g");
      text = text.replace(named, (_, list) => {
        const renamed = list.replace(/([A-Za-z_$][\w$]*)(\s+as\s+[A-Za-z_$][\w$]*)?/g, (__, name, alias) =>
          alias === undefined
            ? `${exportName.get(member)(name)} as ${name}`
            : `${exportName.get(member)(name)}${alias}`,
        );
        return `import {${renamed}} from ${JSON.stringify(mergedSpecifier)};`;
      });
      text = text.replace(new RegExp(`import\\s*${quoted};`, "g"), `import ${JSON.stringify(mergedSpecifier)};`);
      if (text.includes(specifier.slice(2))) {
        throw new Error(`merging chunks: ${path.basename(file.path)} refers to ${specifier} in a way not rewritten`);
      }
    }
    return text;
  };
  const dropped = new Set(members.flatMap((file) => [file, `${file}.map`]));
  const file = (filePath, text) => ({ path: filePath, text, contents: Buffer.from(text) });
  return [
    ...outputFiles
      .filter((output) => !dropped.has(output.path))
      .map((output) => (output.path.endsWith(".js") ? file(output.path, rewrite(output)) : output)),
    file(mergedPath, mergedText),
    file(`${mergedPath}.map`, mapText),
  ];
}
