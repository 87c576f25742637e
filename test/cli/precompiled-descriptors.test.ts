/**
 * dist/ embeds the generated protobuf descriptors as JSON instead of base64 protobuf (tools/precompiled-descriptors.mjs,
 * tools/descriptor-json.mjs, tools/json-file-desc.mjs), so a start skips the cold base64 and binary decoding (the lazy descriptors hydrate it
 * when a `proto` is asked for; a file they do not cover is built from it at once). Here every generated module's
 * descriptor, precompiled and hydrated as dist/ does it, must be the descriptor `fileDesc()` makes from the base64:
 * the same bytes, the same JSON names, the same messages, enums and services, and messages that encode alike.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, type DescFile, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs build tool without type declarations
import { fileDescFromJson as fromJson } from "../../tools/json-file-desc.mjs";
// @ts-expect-error: a plain .mjs build tool without type declarations
import { precompileDescriptors as precompile, descriptorJson as toJson } from "../../tools/precompiled-descriptors.mjs";

const fileDescFromJson = fromJson as (json: string, imports: readonly DescFile[]) => DescFile;
const descriptorJson = toJson as (base64: string) => string | undefined;
const precompileDescriptors = precompile as (source: string) => string;

const genDir = fileURLToPath(new URL("../../src/gen/", import.meta.url));
const modules = readdirSync(genDir, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith("_pb.ts"));

/** What a file's messages, enums and services are, with each field's JSON name, number and kind. */
function shape(file: DescFile) {
  return {
    messages: file.messages.map((message) => ({
      name: message.typeName,
      fields: message.fields.map((field) => [
        field.name,
        field.jsonName,
        field.number,
        field.fieldKind,
        field.oneof?.name,
      ]),
      nested: message.nestedMessages.map((nested) => nested.typeName),
    })),
    enums: file.enums.map((e) => [e.typeName, e.values.map((value) => [value.name, value.number])]),
    services: file.services.map((service) => [service.typeName, service.methods.map((method) => method.name)]),
  };
}

describe("precompiled protobuf descriptors", () => {
  it("hydrate to the descriptors fileDesc() decodes, for every generated module", async () => {
    expect(modules.length).toBeGreaterThan(10);
    for (const path of modules) {
      const source = readFileSync(join(genDir, path), "utf8");
      const base64 = /\bfileDesc\("([A-Za-z0-9+/=]+)"/.exec(source)?.[1];
      expect(base64, path).toBeDefined();
      const json = descriptorJson(base64 as string);
      // Every descriptor of ours fits JSON; one that did not would keep its base64 (slower, still correct).
      expect(json, `${path} kept its base64`).toBeDefined();
      const generated = Object.values(await import(join(genDir, path))).find(
        (value): value is DescFile => (value as DescFile | undefined)?.kind === "file",
      ) as DescFile;
      const hydrated = fileDescFromJson(json as string, generated.dependencies);
      expect(toBinary(FileDescriptorProtoSchema, hydrated.proto), path).toEqual(
        toBinary(FileDescriptorProtoSchema, generated.proto),
      );
      expect(shape(hydrated), path).toEqual(shape(generated));
      // Built against the same imported files: the same dependencies, and every field naming a type of another file
      // names that very descriptor (fileDescFromJson builds without the imports' own imports).
      expect(hydrated.dependencies, path).toEqual(generated.dependencies);
      for (const [i, dependency] of generated.dependencies.entries()) expect(hydrated.dependencies[i]).toBe(dependency);
      const typesOf = (file: DescFile) =>
        file.messages.flatMap((message) =>
          message.fields.map((field) => field.message ?? field.enum).filter((type) => type?.file !== file),
        );
      const foreign = typesOf(hydrated);
      for (const [i, type] of typesOf(generated).entries()) expect(foreign[i], path).toBe(type);
      // A message of each type, with its fields at their defaults, encodes alike through either descriptor.
      for (const [i, message] of generated.messages.entries()) {
        const twin = hydrated.messages[i];
        expect(twin?.typeName).toBe(message.typeName);
        if (twin !== undefined) expect(toBinary(twin, create(twin))).toEqual(toBinary(message, create(message)));
      }
      // What the build writes: the call replaced (by lazy descriptors over this JSON, test/cli/lazy-descriptors.test.ts),
      // the rest of the module as generated.
      const precompiled = precompileDescriptors(source);
      expect(precompiled).not.toContain(`fileDesc("${base64}"`);
      expect(precompiled).toContain(`, () => ${JSON.stringify(json)}`);
    }
  });
});
