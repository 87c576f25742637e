/**
 * The esbuild plugin of tools/build.mjs that precompiles the generated protobuf descriptors: in each
 * `src/gen/**\/*_pb.ts`, `fileDesc("<base64>", [deps])` becomes `lazyFileDesc("<data>", () => "<json>", [deps])`, the
 * descriptors as the library's registry resolves them, built when first read (tools/lazy-descriptors.mjs), over the
 * FileDescriptorProto as JSON (tools/descriptor-json.mjs). A file the lazy descriptors do not cover (extensions,
 * explicit default values, public imports: none of ours) becomes `fileDescFromJson("<json>", [deps])`
 * (tools/json-file-desc.mjs), and a descriptor whose hydrated JSON does not encode to the same bytes (a field JSON cannot carry, such as unknown fields
 * or 64-bit integers) keeps its base64.
 *
 * The generated modules of the packages the bundle uses (google/protobuf's any, struct and empty of
 * @bufbuild/protobuf, the gRPC status of @connectrpc/connect) are built lazily too, where the lazy descriptors cover
 * them, from the descriptors the package's own module makes; and descriptor.proto, which the library boots when a
 * module of it is imported, is booted in dist/ only when a `proto` is first hydrated
 * (tools/descriptor-proto-schema.mjs). So loading the protocol code builds no registry at all: that was 6–9 ms of
 * CPU on the way to a start's first answer (descriptor.proto's boot 4–6 ms, the four `fileDesc()` calls 2–2.5).
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { create, createFileRegistry, fromBinary, isFieldSet, toBinary } from "@bufbuild/protobuf";
import { createFileDescriptorProtoBoot } from "@bufbuild/protobuf/codegenv2";
import { protoCamelCase } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import {
  FieldDescriptorProtoSchema,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  file_google_protobuf_descriptor,
} from "@bufbuild/protobuf/wkt";
import { fileDescriptorFromJson } from "./descriptor-json.mjs";

const helper = fileURLToPath(new URL("./json-file-desc.mjs", import.meta.url));
const lazyHelper = fileURLToPath(new URL("./lazy-descriptors.mjs", import.meta.url));
const schemaHelper = fileURLToPath(new URL("./descriptor-proto-schema.mjs", import.meta.url));
const genDir = fileURLToPath(new URL("../src/gen/", import.meta.url));
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
  const root = decodeDescriptor(base64);
  let json;
  try {
    // Empty lists left out: hydration gives every list field an empty array anyway.
    json = JSON.stringify(root, (key, value) =>
      key === "$typeName" || (Array.isArray(value) && value.length === 0) ? undefined : value,
    );
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

/** The FileDescriptorProto in `base64`, its JSON names restored as `fileDesc()` restores them. */
function decodeDescriptor(base64) {
  const root = fromBinary(FileDescriptorProtoSchema, base64Decode(base64));
  root.messageType.forEach(restoreJsonNames);
  return root;
}

/**
 * The library's registry of every generated file under `dir` (each decoded as `fileDesc()` decodes it), by proto
 * file name; built once per directory.
 */
const registries = new Map();
export function generatedRegistry(dir = genDir) {
  let files = registries.get(dir);
  if (files !== undefined) return files;
  // The embedded descriptors list no imports (`fileDesc()` gets them from the module's own imports): each file's
  // come from its `fileDesc("…", [file_…])` call and the module each of those is imported from.
  const byModule = new Map();
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (!name.endsWith("_pb.ts")) continue;
    const source = readFileSync(path.join(dir, name), "utf8");
    const match = FILE_DESC.exec(source);
    if (match === null) continue;
    byModule.set(path.join(dir, name), { source, proto: decodeDescriptor(match[1]) });
  }
  const protos = new Map();
  for (const [module, { source, proto }] of byModule) {
    const imported = /\bfileDesc\("[A-Za-z0-9+/=]+", \[([^\]]*)\]/.exec(source)?.[1] ?? "";
    proto.dependency = imported
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "")
      .map((name) => {
        const from = new RegExp(`import \\{ ${name} \\} from "([^"]+)"`).exec(source)?.[1];
        const target =
          from === undefined
            ? undefined
            : byModule.get(path.resolve(path.dirname(module), from.replace(/\.js$/, ".ts")));
        if (target === undefined) throw new Error(`${module}: cannot find the module of ${name}`);
        return target.proto.name;
      });
    protos.set(proto.name, proto);
  }
  // A FileDescriptorSet lists each file after the files it imports.
  const ordered = [];
  const visit = (proto) => {
    if (ordered.includes(proto)) return;
    for (const dependency of proto.dependency) {
      const imported = protos.get(dependency);
      if (imported !== undefined) visit(imported);
    }
    ordered.push(proto);
  };
  for (const proto of protos.values()) visit(proto);
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: ordered }));
  files = new Map(ordered.map((proto) => [proto.name, registry.getFile(proto.name)]));
  registries.set(dir, files);
  return files;
}

const nullable = (item) => item ?? null;

/** Whether {@link lazyDescriptorData} covers `file`: no extensions, explicit default values or public imports. */
function coversFile(file) {
  const message = (desc) =>
    desc.nestedExtensions.length === 0 &&
    desc.fields.every((field) => !isFieldSet(field.proto, FieldDescriptorProtoSchema.field.defaultValue)) &&
    desc.nestedMessages.every(message);
  return file.extensions.length === 0 && file.proto.publicDependency.length === 0 && file.messages.every(message);
}

/** What the registry resolved for `file`, as tools/lazy-descriptors.mjs reads it (its layout is described there). */
export function lazyDescriptorData(file) {
  if (!coversFile(file)) return undefined;
  const enumData = (desc, protos) => [
    protos.indexOf(desc.proto),
    desc.name,
    desc.typeName,
    desc.deprecated,
    desc.open,
    nullable(desc.sharedPrefix),
    desc.values.map((value) => [value.name, value.localName, value.number, value.deprecated]),
  ];
  const messageData = (desc, protos) => [
    protos.indexOf(desc.proto),
    desc.name,
    desc.typeName,
    desc.deprecated,
    desc.nestedEnums.map((nested) => enumData(nested, desc.proto.enumType)),
    desc.nestedMessages.map((nested) => messageData(nested, desc.proto.nestedType)),
    desc.oneofs.map((oneof) => [desc.proto.oneofDecl.indexOf(oneof.proto), oneof.name, oneof.localName]),
    desc.fields.map((field) => [
      desc.proto.field.indexOf(field.proto),
      field.name,
      field.number,
      field.localName,
      field.jsonName,
      field.fieldKind,
      nullable(field.scalar),
      nullable((field.message ?? field.enum)?.typeName),
      field.presence,
      field.utf8Validation,
      nullable(field.listKind),
      nullable(field.mapKind),
      nullable(field.mapKey),
      nullable(field.delimitedEncoding),
      nullable(field.packed),
      field.longAsString,
      field.deprecated,
      field.oneof === undefined ? -1 : desc.oneofs.indexOf(field.oneof),
    ]),
    desc.members.map((member) =>
      member.kind === "oneof" ? ~desc.oneofs.indexOf(member) : desc.fields.indexOf(member),
    ),
  ];
  return [
    file.proto.name,
    file.name,
    file.edition,
    file.deprecated,
    file.enums.map((desc) => enumData(desc, file.proto.enumType)),
    file.messages.map((desc) => messageData(desc, file.proto.messageType)),
    file.services.map((desc) => [
      file.proto.service.indexOf(desc.proto),
      desc.name,
      desc.typeName,
      desc.deprecated,
      desc.methods.map((method) => [
        method.name,
        method.localName,
        method.methodKind,
        method.input.typeName,
        method.output.typeName,
        method.idempotency,
        method.deprecated,
      ]),
    ]),
  ];
}

/**
 * A generated module's source with its descriptor precompiled (unchanged when it has none, or JSON cannot carry it):
 * lazily built from the registry's data where {@link lazyDescriptorData} covers the file, else hydrated from JSON.
 */
export function precompileDescriptors(source, dir = genDir) {
  const match = FILE_DESC.exec(source);
  const json = match === null ? undefined : descriptorJson(match[1]);
  if (json === undefined) return source;
  const file = generatedRegistry(dir).get(decodeDescriptor(match[1]).name);
  const data = file === undefined ? undefined : lazyDescriptorData(file);
  if (data === undefined) {
    return `import { fileDescFromJson } from ${JSON.stringify(helper)};\n${source.replace(
      FILE_DESC,
      () => `fileDescFromJson(${JSON.stringify(json)}`,
    )}`;
  }
  return `import { lazyFileDesc } from ${JSON.stringify(lazyHelper)};\n${source.replace(
    FILE_DESC,
    () => `lazyFileDesc(${JSON.stringify(JSON.stringify(data))}, () => ${JSON.stringify(json)}`,
  )}`;
}

/**
 * A generated module of a package (`<name>_pb.js` under node_modules) with its descriptor built lazily: the data
 * comes from the file descriptor the module itself exports, as `fileDesc()` made it. Unchanged when it embeds no
 * descriptor, or the lazy descriptors do not cover it (it then boots descriptor.proto when it loads, as before).
 */
export async function precompileLibraryModule(file) {
  const source = await readFile(file, "utf8");
  const match = FILE_DESC.exec(source);
  const json = match === null ? undefined : descriptorJson(match[1]);
  if (json === undefined) return source;
  const name = decodeDescriptor(match[1]).name;
  const exported = Object.values(await import(pathToFileURL(file).href)).find(
    (value) => value?.kind === "file" && value.proto.name === name,
  );
  const data = exported === undefined ? undefined : lazyDescriptorData(exported);
  if (data === undefined) return source;
  return `import { lazyFileDesc } from ${JSON.stringify(lazyHelper)};\n${source.replace(
    FILE_DESC,
    () => `lazyFileDesc(${JSON.stringify(JSON.stringify(data))}, () => ${JSON.stringify(json)}`,
  )}`;
}

/**
 * What the library boots descriptor.proto from (protoc-gen-es writes it with `createFileDescriptorProtoBoot`, as
 * here), and the index of FileDescriptorProto among its messages.
 */
export function descriptorProtoBoot() {
  const index = file_google_protobuf_descriptor.messages.indexOf(FileDescriptorProtoSchema);
  if (index < 0) throw new Error("FileDescriptorProto is not a message of descriptor.proto");
  return { boot: createFileDescriptorProtoBoot(file_google_protobuf_descriptor.proto), index };
}

/**
 * What dist/ has in place of tools/descriptor-proto-schema.mjs: the FileDescriptorProto schema, descriptor.proto
 * booted on the first call from {@link descriptorProtoBoot}.
 */
export function lazyDescriptorProtoSchemaSource() {
  const { boot, index } = descriptorProtoBoot();
  return [
    'import { boot, messageDesc } from "@bufbuild/protobuf/codegenv2";',
    "let schema;",
    "/** The FileDescriptorProto schema, descriptor.proto booted on the first call. */",
    "export function fileDescriptorProtoSchema() {",
    `  schema ??= messageDesc(boot(${JSON.stringify(boot)}), ${index});`,
    "  return schema;",
    "}",
    "",
  ].join("\n");
}

/**
 * The plugin: generated modules under src/gen/ go through {@link precompileDescriptors}, the packages' ones through
 * {@link precompileLibraryModule}, and tools/descriptor-proto-schema.mjs is replaced by
 * {@link lazyDescriptorProtoSchemaSource}.
 */
export const precompiledDescriptors = {
  name: "precompiled-descriptors",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]gen[\\/].*_pb\.ts$/ }, async (args) => ({
      contents: precompileDescriptors(await readFile(args.path, "utf8")),
      loader: "ts",
      resolveDir: path.dirname(args.path),
    }));
    build.onLoad({ filter: /[\\/]node_modules[\\/].*_pb\.js$/ }, async (args) => ({
      contents: await precompileLibraryModule(args.path),
      loader: "js",
      resolveDir: path.dirname(args.path),
    }));
    build.onLoad({ filter: /[\\/]tools[\\/]descriptor-proto-schema\.mjs$/ }, (args) =>
      path.resolve(args.path) === schemaHelper
        ? { contents: lazyDescriptorProtoSchemaSource(), loader: "js", resolveDir: path.dirname(args.path) }
        : undefined,
    );
  },
};
