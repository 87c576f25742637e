/**
 * dist/ builds the generated protobuf descriptors lazily from what the library's registry resolved at build time
 * (tools/lazy-descriptors.mjs, tools/precompiled-descriptors.mjs). Here, for every generated file, the lazy
 * descriptors must be the ones `fileDesc()` makes (what src/gen/ gives under vitest): every property of every file,
 * message, field, oneof, enum, value, service and method alike (a descriptor it links to being the lazy twin of the
 * one `fileDesc()` links to), and every message type encoding and decoding alike, with every field set, through
 * either; the captured vectors of ../shared/vectors/ decode alike too.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  create,
  createRegistry,
  type DescEnum,
  type DescField,
  type DescFile,
  type DescMessage,
  fromBinary,
  ScalarType,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { boot, messageDesc } from "@bufbuild/protobuf/codegenv2";
import { FileDescriptorProtoSchema, file_google_protobuf_descriptor } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs build tool without type declarations
import { lazyFileDesc as lazy } from "../../tools/lazy-descriptors.mjs";
// @ts-expect-error: a plain .mjs build tool without type declarations
import * as precompiled from "../../tools/precompiled-descriptors.mjs";

const lazyFileDesc = lazy as (data: string, json: () => string, imports: readonly DescFile[]) => DescFile;
const {
  descriptorJson,
  descriptorProtoBoot,
  generatedRegistry,
  lazyDescriptorData,
  precompileDescriptors,
  precompileLibraryModule,
} = precompiled as {
  descriptorJson: (base64: string) => string | undefined;
  descriptorProtoBoot: () => { boot: Parameters<typeof boot>[0]; index: number };
  generatedRegistry: () => Map<string, DescFile>;
  lazyDescriptorData: (file: DescFile) => unknown[] | undefined;
  precompileDescriptors: (source: string) => string;
  precompileLibraryModule: (file: string) => Promise<string>;
};

const genDir = fileURLToPath(new URL("../../src/gen/", import.meta.url));
const vectorsDir = fileURLToPath(new URL("../../../shared/vectors/", import.meta.url));
const modules = readdirSync(genDir, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith("_pb.ts"));
const descriptorSchemas = createRegistry(file_google_protobuf_descriptor);
/**
 * How the build passes a file's FileDescriptorProto JSON: inside a function, so that a start compiles the string (and
 * holds it in its code cache and heap) only when a `proto` is hydrated, which no turn does.
 */
const JSON_IN_A_FUNCTION = /\blazyFileDesc\("(?:[^"\\]|\\.)*", \(\) => "\{/;

/** Every generated file as `fileDesc()` makes it, and its lazy twin (built as dist/ builds it), by proto name. */
async function bothRegistries() {
  const real = new Map<string, { file: DescFile; source: string }>();
  for (const path of modules) {
    const source = readFileSync(join(genDir, path), "utf8");
    const file = Object.values(await import(join(genDir, path))).find(
      (value): value is DescFile => (value as DescFile | undefined)?.kind === "file",
    ) as DescFile;
    real.set(file.proto.name, { file, source });
  }
  const twins = new Map<DescFile, DescFile>();
  const twinOf = (file: DescFile): DescFile => {
    let twin = twins.get(file);
    if (twin !== undefined) return twin;
    const entry = real.get(file.proto.name);
    const base64 = /\bfileDesc\("([A-Za-z0-9+/=]+)"/.exec(entry?.source ?? "")?.[1] as string;
    const data = lazyDescriptorData(generatedRegistry().get(file.proto.name) as DescFile);
    expect(data, `${file.name} is built lazily`).toBeDefined();
    twin = lazyFileDesc(JSON.stringify(data), () => descriptorJson(base64) as string, file.dependencies.map(twinOf));
    twins.set(file, twin);
    return twin;
  };
  return [...real.values()].map(({ file, source }) => ({ file, twin: twinOf(file), source }));
}

/** A package's ES module folder (dist/esm/), from where its CommonJS entry resolves. */
const require = createRequire(import.meta.url);
const esmDir = (name: string) => join(dirname(dirname(dirname(require.resolve(name)))), "dist", "esm");
/**
 * The packages' generated modules dist/ imports (google/protobuf's any, struct and empty, and connect's gRPC status,
 * which imports any): the build makes each of them lazy too (`precompileLibraryModule`).
 */
const libraryModules = [
  ...["any", "struct", "empty"].map((name) =>
    join(esmDir("@bufbuild/protobuf"), "wkt", "gen", "google", "protobuf", `${name}_pb.js`),
  ),
  join(esmDir("@connectrpc/connect"), "protocol-grpc", "gen", "status_pb.js"),
];

/** Each of {@link libraryModules} as its package's module makes it, and its lazy twin, as dist/ builds it. */
async function libraryTwins() {
  const twins = new Map<DescFile, DescFile>();
  const files = new Map<string, { file: DescFile; source: string }>();
  for (const path of libraryModules) {
    const source = readFileSync(path, "utf8");
    const file = Object.values(await import(path)).find(
      (value): value is DescFile => (value as DescFile | undefined)?.kind === "file",
    ) as DescFile;
    files.set(file.proto.name, { file, source });
  }
  const twinOf = (file: DescFile): DescFile => {
    let twin = twins.get(file);
    if (twin !== undefined) return twin;
    const entry = files.get(file.proto.name);
    expect(entry, `${file.name} is one of the modules built lazily`).toBeDefined();
    const base64 = /\bfileDesc\("([A-Za-z0-9+/=]+)"/.exec(entry?.source ?? "")?.[1] as string;
    const data = lazyDescriptorData(file);
    expect(data, `${file.name} is built lazily`).toBeDefined();
    twin = lazyFileDesc(JSON.stringify(data), () => descriptorJson(base64) as string, file.dependencies.map(twinOf));
    twins.set(file, twin);
    return twin;
  };
  return [...files.values()].map(({ file }) => ({ file, twin: twinOf(file) }));
}

/**
 * Compares `actual` (lazy) with `expected` (`fileDesc()`'s) through every property `expected` has: descriptors pair
 * once (a second meeting must be the same twin), functions are called (toString, getDefaultValue), and the
 * FileDescriptorProto parts encode to the same bytes.
 */
function compare(expected: unknown, actual: unknown, path: string, pairs: Map<object, unknown>): void {
  if (typeof expected === "function") {
    expect(typeof actual, path).toBe("function");
    return;
  }
  if (typeof expected !== "object" || expected === null) {
    expect(actual, path).toBe(expected);
    return;
  }
  expect(typeof actual, path).toBe("object");
  const seen = pairs.get(expected);
  if (seen !== undefined) {
    expect(actual === seen, `${path}: the same descriptor twin`).toBe(true);
    return;
  }
  pairs.set(expected, actual);
  const target = actual as Record<string, unknown>;
  if ("$typeName" in expected) {
    const schema = descriptorSchemas.getMessage((expected as { $typeName: string }).$typeName) as DescMessage;
    expect(toBinary(schema, actual as never), path).toEqual(toBinary(schema, expected as never));
    return;
  }
  if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, `${path}.length`).toBe(expected.length);
    for (const [i, item] of expected.entries()) compare(item, (actual as unknown[])[i], `${path}[${i}]`, pairs);
    return;
  }
  const keys = Object.keys(expected);
  for (const key of keys) {
    const value = (expected as Record<string, unknown>)[key];
    expect(key in target, `${path}.${key} exists`).toBe(true);
    if (typeof value === "function") {
      expect(typeof target[key], `${path}.${key}`).toBe("function");
      expect((target[key] as () => unknown).call(target), `${path}.${key}()`).toEqual(value.call(expected));
    } else compare(value, target[key], `${path}.${key}`, pairs);
  }
  if ("kind" in expected) {
    // What protobuf-es reads of a descriptor it reads by name; the lazy one has nothing it lacks (the proto aside).
    compare((expected as unknown as { proto: unknown }).proto, target.proto, `${path}.proto`, pairs);
    expect((expected as object).toString(), `${path}.toString()`).toBe(String(actual));
    for (const key of Object.keys(target)) expect(keys, `${path}: own ${key}`).toContain(key);
  } else expect(Object.keys(target).sort(), `${path} keys`).toEqual([...keys].sort());
}

/** A scalar value of `type` (non-zero, so it is encoded). */
function scalar(type: ScalarType, longAsString: boolean, salt: number): unknown {
  switch (type) {
    case ScalarType.STRING:
      return `s${salt}`;
    case ScalarType.BYTES:
      return new Uint8Array([1, salt & 0xff]);
    case ScalarType.BOOL:
      return true;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return 1.5 + salt;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return longAsString ? `-${salt + 7}` : BigInt(-(salt + 7));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return longAsString ? `${salt + 7}` : BigInt(salt + 7);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return -(salt + 7);
    default:
      return salt + 7;
  }
}

const lastValue = (enumeration: DescEnum) => enumeration.values[enumeration.values.length - 1]?.number ?? 0;

/** An init object for `desc` with every field set (the `pick`-th case of each oneof), `depth` messages deep. */
function sample(desc: DescMessage, depth: number, pick: number): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  const fieldValue = (field: DescField, salt: number): unknown => {
    if (field.message !== undefined) return depth > 0 ? sample(field.message, depth - 1, pick) : {};
    if (field.enum !== undefined) return lastValue(field.enum);
    return scalar(field.scalar as ScalarType, (field as { longAsString?: boolean }).longAsString === true, salt);
  };
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      const field = member.fields[pick % member.fields.length] as DescField;
      init[member.localName] = { case: field.localName, value: fieldValue(field, 1) };
      continue;
    }
    if (member.fieldKind === "list") init[member.localName] = [fieldValue(member, 1), fieldValue(member, 2)];
    else if (member.fieldKind === "map") {
      const key = member.mapKey === ScalarType.STRING ? "k" : member.mapKey === ScalarType.BOOL ? "true" : "3";
      init[member.localName] = { [key]: fieldValue(member, 1) };
    } else init[member.localName] = fieldValue(member, 1);
  }
  return init;
}

function messagesOf(file: DescFile): DescMessage[] {
  const all: DescMessage[] = [];
  const add = (message: DescMessage) => {
    all.push(message);
    message.nestedMessages.forEach(add);
  };
  file.messages.forEach(add);
  return all;
}

describe("lazy protobuf descriptors", () => {
  it("are, property by property, the descriptors fileDesc() makes, for every generated file", async () => {
    const files = await bothRegistries();
    expect(files.length).toBeGreaterThan(10);
    const pairs = new Map<object, unknown>();
    for (const { file, twin } of files) compare(file, twin, file.name, pairs);
    // Every message of every file was compared (its fields built and checked).
    const messages = files.flatMap(({ file }) => messagesOf(file));
    expect(messages.length).toBeGreaterThan(500);
    for (const message of messages) expect(pairs.has(message), message.typeName).toBe(true);
  });

  it("read a file's FileDescriptorProto JSON only when its proto is first hydrated", async () => {
    const { file, source } = (await bothRegistries()).find(({ file }) => file.messages.length > 0) as {
      file: DescFile;
      source: string;
    };
    const base64 = /\bfileDesc\("([A-Za-z0-9+/=]+)"/.exec(source)?.[1] as string;
    const data = lazyDescriptorData(generatedRegistry().get(file.proto.name) as DescFile);
    let reads = 0;
    const twin = lazyFileDesc(
      JSON.stringify(data),
      () => {
        reads += 1;
        return descriptorJson(base64) as string;
      },
      file.dependencies,
    );
    // What a turn reads of a descriptor: its messages, their fields, a field's type.
    for (const message of messagesOf(twin)) for (const field of message.fields) void field.fieldKind;
    expect(reads).toBe(0);
    expect(toBinary(FileDescriptorProtoSchema, twin.proto).length).toBeGreaterThan(0);
    void twin.proto;
    expect(reads).toBe(1);
  });

  it("encode and decode every message type alike, with every field set", async () => {
    const files = await bothRegistries();
    let checked = 0;
    for (const { file, twin } of files) {
      const twins = messagesOf(twin);
      for (const [i, message] of messagesOf(file).entries()) {
        const lazyMessage = twins[i] as DescMessage;
        const cases = Math.max(1, ...message.oneofs.map((oneof) => oneof.fields.length));
        for (let pick = 0; pick < cases; pick++) {
          const init = sample(message, 2, pick);
          const bytes = toBinary(message, create(message, init as never));
          expect(toBinary(lazyMessage, create(lazyMessage, init as never)), message.typeName).toEqual(bytes);
          const decoded = fromBinary(lazyMessage, bytes);
          expect(toBinary(lazyMessage, decoded), message.typeName).toEqual(bytes);
          expect(toJson(lazyMessage, decoded), message.typeName).toEqual(toJson(message, fromBinary(message, bytes)));
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it("decode the captured vectors alike", async (context) => {
    const path = join(vectorsDir, "agent-toolcall-interaction-updates.captured-2026-01-26.json");
    if (!existsSync(path)) {
      console.log(`lazy descriptors: ${path} is absent; the captured vectors are not checked`);
      context.skip();
    }
    const files = await bothRegistries();
    const find = (typeName: string, lazySide: boolean) =>
      files
        .flatMap(({ file, twin }) => messagesOf(lazySide ? twin : file))
        .find((message) => message.typeName === typeName) as DescMessage;
    const { vectors } = JSON.parse(readFileSync(path, "utf8")) as {
      vectors: { message_type: string; captured_raw_hex: string }[];
    };
    expect(vectors.length).toBeGreaterThan(0);
    for (const vector of vectors) {
      const bytes = Buffer.from(vector.captured_raw_hex, "hex");
      const real = find(vector.message_type, false);
      const twin = find(vector.message_type, true);
      const decoded = fromBinary(twin, bytes);
      expect(toJson(twin, decoded), vector.message_type).toEqual(toJson(real, fromBinary(real, bytes)));
      expect(toBinary(twin, decoded), vector.message_type).toEqual(toBinary(real, fromBinary(real, bytes)));
    }
  });

  it("are, for the packages' generated modules dist/ imports, the descriptors their modules make", async () => {
    const files = await libraryTwins();
    expect(files.map(({ file }) => file.proto.name).sort()).toEqual([
      "google/protobuf/any.proto",
      "google/protobuf/empty.proto",
      "google/protobuf/struct.proto",
      "status.proto",
    ]);
    const pairs = new Map<object, unknown>();
    for (const { file, twin } of files) compare(file, twin, file.name, pairs);
    for (const { file, twin } of files) {
      const twins = messagesOf(twin);
      for (const [i, message] of messagesOf(file).entries()) {
        expect(pairs.has(message), message.typeName).toBe(true);
        const lazyMessage = twins[i] as DescMessage;
        const init = sample(message, 2, 0);
        const bytes = toBinary(message, create(message, init as never));
        expect(toBinary(lazyMessage, create(lazyMessage, init as never)), message.typeName).toEqual(bytes);
        expect(toBinary(lazyMessage, fromBinary(lazyMessage, bytes)), message.typeName).toEqual(bytes);
        // An Any's JSON (a Status holds a list of them) names its packed type, which needs a registry holding it:
        // their bytes are compared above.
        if (message.typeName === "google.protobuf.Any" || message.typeName === "google.rpc.Status") continue;
        expect(toJson(lazyMessage, fromBinary(lazyMessage, bytes)), message.typeName).toEqual(
          toJson(message, fromBinary(message, bytes)),
        );
      }
    }
  });

  it("are what the build writes into the packages' generated modules dist/ imports", async () => {
    for (const path of libraryModules) {
      const source = await precompileLibraryModule(path);
      expect(source, path).toMatch(JSON_IN_A_FUNCTION);
      expect(source, path).not.toMatch(/\bfileDesc\("/);
    }
  });

  it("boot descriptor.proto, in dist/, from what the library boots it from", () => {
    // dist/ boots it only when a `proto` is first hydrated (tools/descriptor-proto-schema.mjs).
    const { boot: init, index } = descriptorProtoBoot();
    const schema = messageDesc(boot(init), index);
    expect(schema.typeName).toBe(FileDescriptorProtoSchema.typeName);
    expect(toBinary(FileDescriptorProtoSchema, schema.file.proto)).toEqual(
      toBinary(FileDescriptorProtoSchema, file_google_protobuf_descriptor.proto),
    );
    const reference = createRegistry(file_google_protobuf_descriptor);
    for (const message of messagesOf(schema.file)) {
      const twin = reference.getMessage(message.typeName) as DescMessage;
      expect(
        message.fields.map((f) => [f.localName, f.number, f.fieldKind]),
        message.typeName,
      ).toEqual(twin.fields.map((f) => [f.localName, f.number, f.fieldKind]));
    }
  });

  it("leave dist/ no descriptor to build when the protocol code loads", () => {
    // Every descriptor of the current build is lazy: no `fileDesc()` call, and descriptor.proto booted only inside
    // the function that hydrates a `proto`.
    const dist = fileURLToPath(new URL("../../dist/", import.meta.url));
    const builds = JSON.parse(readFileSync(join(dist, ".builds.json"), "utf8")) as { builds: string[][] };
    const files = (builds.builds.at(-1) ?? []).filter((file) => file.startsWith("chunks/") && file.endsWith(".js"));
    expect(files.length).toBeGreaterThan(10);
    let boots = 0;
    for (const file of ["main.js", ...files]) {
      const text = readFileSync(join(dist, file), "utf8");
      expect(text, file).not.toMatch(/\bfileDesc\)?\("/);
      for (const line of text.split("\n").filter((each) => /\bboot\(\{/.test(each))) {
        expect(line, file).toMatch(/^ {2}schema \?\?= messageDesc\(boot\(\{/);
        boots += 1;
      }
    }
    expect(boots).toBe(1);
  });

  it("are what the build writes into every generated module", () => {
    for (const path of modules) {
      const precompiledSource = precompileDescriptors(readFileSync(join(genDir, path), "utf8"));
      expect(precompiledSource, path).toMatch(JSON_IN_A_FUNCTION);
      expect(precompiledSource, path).not.toMatch(/\bfileDesc\("/);
    }
  });
});
