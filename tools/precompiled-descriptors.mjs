/**
 * The esbuild plugin of tools/build.mjs that precompiles the generated protobuf descriptors (see
 * tools/descriptor-json.mjs): in each `src/gen/**\/*_pb.ts`, `fileDesc("<base64>", [deps])` becomes
 * `fileDescFromJson("<json>", [deps])`. A descriptor whose hydrated JSON does not encode to the same bytes (a field
 * JSON cannot carry, such as unknown fields or 64-bit integers) keeps its base64.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { protoCamelCase } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { fileDescriptorFromJson } from "./descriptor-json.mjs";

const helper = fileURLToPath(new URL("./descriptor-json.mjs", import.meta.url));
const FILE_DESC = /\bfileDesc\("([A-Za-z0-9+/=]+)"/;

/** What `fileDesc()` does to a decoded descriptor before building its registry: the default JSON names. */
function restoreJsonNames(message) {
  for (const field of message.field) {
    if (!Object.hasOwn(field, "jsonName")) field.jsonName = protoCamelCase(field.name);
  }
  message.nestedType.forEach(restoreJsonNames);
}

const sameBytes = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

/** The descriptor in `base64` as JSON for {@link fileDescriptorFromJson}, or undefined when JSON cannot carry it. */
export function descriptorJson(base64) {
  const root = fromBinary(FileDescriptorProtoSchema, base64Decode(base64));
  root.messageType.forEach(restoreJsonNames);
  let json;
  try {
    json = JSON.stringify(root, (key, value) => (key === "$typeName" ? undefined : value));
  } catch {
    return undefined; // a bigint
  }
  const expected = toBinary(FileDescriptorProtoSchema, root);
  try {
    return sameBytes(toBinary(FileDescriptorProtoSchema, fileDescriptorFromJson(json)), expected) ? json : undefined;
  } catch {
    return undefined;
  }
}

/** A generated module's source with its descriptor precompiled (unchanged when it has none, or JSON cannot carry it). */
export function precompileDescriptors(source) {
  const match = FILE_DESC.exec(source);
  const json = match === null ? undefined : descriptorJson(match[1]);
  if (json === undefined) return source;
  return `import { fileDescFromJson } from ${JSON.stringify(helper)};\n${source.replace(
    FILE_DESC,
    () => `fileDescFromJson(${JSON.stringify(json)}`,
  )}`;
}

/** The plugin: generated modules under src/gen/ go through {@link precompileDescriptors}. */
export const precompiledDescriptors = {
  name: "precompiled-descriptors",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]gen[\\/].*_pb\.ts$/ }, async (args) => ({
      contents: precompileDescriptors(await readFile(args.path, "utf8")),
      loader: "ts",
      resolveDir: path.dirname(args.path),
    }));
  },
};
