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

/** `fileDesc()` of @bufbuild/protobuf/codegenv2 for a descriptor the build precompiled to JSON. */
export function fileDescFromJson(json, imports) {
  const root = fileDescriptorFromJson(json);
  root.dependency = imports?.map((file) => file.proto.name) ?? [];
  const registry = createFileRegistry(root, (name) => imports?.find((file) => file.proto.name === name));
  return registry.getFile(root.name);
}
