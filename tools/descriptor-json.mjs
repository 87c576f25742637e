/**
 * Precompiled protobuf descriptors (tools/build.mjs). Every generated `src/gen/**\/*_pb.ts` embeds its file descriptor
 * as base64 protobuf, which `fileDesc()` of @bufbuild/protobuf decodes when the module loads: a base64 decoder and
 * the reflective binary reader, both cold, over about 100 KB for the whole tree, before a turn can start. In dist/,
 * the build decodes each descriptor once (JSON names restored, as `fileDesc()` does) and embeds it as JSON; at run
 * time {@link fileDescFromJson} parses it (native JSON.parse) and gives every object the prototype and default
 * fields of the message the binary reader would have made, then builds the registry exactly as `fileDesc()` does.
 * The build checks each file: the hydrated descriptor must encode to the very bytes it decoded, else that file keeps
 * its base64 (tools/precompiled-descriptors.mjs).
 */
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/** Per message type: the prototype its zero message has (proto2 defaults live there) and its fields. */
const plans = new Map();

function planOf(desc) {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plan = {
      prototype: Object.getPrototypeOf(create(desc)),
      typeName: desc.typeName,
      fields: desc.fields.map((field) => ({
        name: field.localName,
        list: field.fieldKind === "list",
        message:
          field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")
            ? field.message
            : undefined,
      })),
    };
    plans.set(desc, plan);
  }
  return plan;
}

/**
 * The message of type `desc` holding what `json` (one JSON.stringify'd message without `$typeName`) holds, shaped as
 * the binary reader shapes it: set fields as own properties, unset ones on the prototype, lists always present.
 */
export function hydrate(desc, json) {
  const plan = planOf(desc);
  const message = Object.create(plan.prototype);
  message.$typeName = plan.typeName;
  for (const field of plan.fields) {
    const value = json[field.name];
    if (field.list) {
      message[field.name] =
        value === undefined
          ? []
          : field.message === undefined
            ? value
            : value.map((item) => hydrate(field.message, item));
    } else if (value !== undefined) {
      message[field.name] = field.message === undefined ? value : hydrate(field.message, value);
    }
  }
  return message;
}

/** A FileDescriptorProto from its precompiled JSON. */
export function fileDescriptorFromJson(json) {
  return hydrate(FileDescriptorProtoSchema, JSON.parse(json));
}

/**
 * `fileDesc()` of @bufbuild/protobuf/codegenv2 for a descriptor the build precompiled to JSON. `fileDesc()` builds
 * the file in a registry of every file it imports, directly or not: `createFileRegistry` adds each import with all of
 * its own imports, again for every path that reaches them (agent.proto's imports reach the shared ones dozens of
 * times), which was a fifth of the CPU the protocol code takes to build its ~570 messages. A file's fields can only
 * name types of the files it imports directly (none of ours uses `import public`; a file that does takes the general
 * path), so here the registry holds those alone: each import is handed over without its dependencies, and the file
 * gets the real ones back. The descriptors are the same objects either way.
 */
export function fileDescFromJson(json, imports) {
  const root = fileDescriptorFromJson(json);
  const direct = imports ?? [];
  root.dependency = direct.map((file) => file.proto.name);
  if (direct.some((file) => file.proto.publicDependency.length > 0)) {
    return createFileRegistry(root, (name) => direct.find((file) => file.proto.name === name)).getFile(root.name);
  }
  const registry = createFileRegistry(root, (name) => {
    const file = direct.find((candidate) => candidate.proto.name === name);
    return file === undefined ? undefined : { ...file, dependencies: [] };
  });
  const file = registry.getFile(root.name);
  file.dependencies = [...direct];
  return file;
}
