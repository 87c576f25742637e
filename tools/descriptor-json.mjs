/**
 * Precompiled protobuf descriptors (tools/build.mjs). Every generated `src/gen/**\/*_pb.ts` embeds its file descriptor
 * as base64 protobuf, which `fileDesc()` of @bufbuild/protobuf decodes when the module loads: a base64 decoder and
 * the reflective binary reader, both cold, over about 100 KB for the whole tree, before a turn can start. In dist/,
 * the build decodes each descriptor once (JSON names restored, as `fileDesc()` does) and embeds it as JSON; at run
 * time {@link fileDescriptorFromJson} parses it (native JSON.parse) and gives every object the prototype and default
 * fields of the message the binary reader would have made (the lazy descriptors' `proto`, and tools/json-file-desc.mjs
 * for a file they do not cover). The build checks each file: the hydrated descriptor must encode to the very bytes it
 * decoded, else that file keeps its base64 (tools/precompiled-descriptors.mjs).
 *
 * Nothing imported here imports a generated module: in dist/, the packages' generated modules (google/protobuf's
 * any and struct) are built by tools/lazy-descriptors.mjs, which imports this module, so an import of the library's
 * main module here (its JSON code imports those) would run one of them before lazy-descriptors.mjs has defined what
 * it builds them with. `reflect()` makes its message with `create()`.
 */
import { reflect } from "@bufbuild/protobuf/reflect";
import { fileDescriptorProtoSchema } from "./descriptor-proto-schema.mjs";

/** Per message type: the prototype its zero message has (proto2 defaults live there) and its fields. */
const plans = new Map();

function planOf(desc) {
  let plan = plans.get(desc);
  if (plan === undefined) {
    plan = {
      prototype: Object.getPrototypeOf(reflect(desc).message),
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
  return hydrate(fileDescriptorProtoSchema(), JSON.parse(json));
}
