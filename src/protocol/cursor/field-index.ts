/**
 * One field-number index per message type for protobuf-es's binary reader, instead of one per decoded message.
 *
 * `fromBinary` wraps every message it decodes (and each nested one) in a reflection object whose `findNumber` builds
 * a `Map` of all the type's fields on its first call, kept on that object only: decoding a server message with a few
 * nested messages built several such maps, each as large as its type has fields, and dropped them at once. The index
 * of a type never changes, so this keeps one per descriptor (weakly) and answers `findNumber` from it: the same
 * field for the same number, only without the garbage (docs/performance.md, "Where serve's CPU per request goes").
 * Installed when this module loads, on the prototype every reflection object shares (@bufbuild/protobuf 2.x).
 */
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";

const byType = new WeakMap<DescMessage, Map<number, DescField>>();

function fieldByNumber(desc: DescMessage, number: number): DescField | undefined {
  let index = byType.get(desc);
  if (index === undefined) {
    index = new Map(desc.fields.map((field) => [field.number, field]));
    byType.set(desc, index);
  }
  return index.get(number);
}

const prototype = Object.getPrototypeOf(reflect(AgentServerMessageSchema)) as {
  findNumber?: (this: { desc: DescMessage }, number: number) => DescField | undefined;
};
// Only where the reader asks for it as this version defines it; another version keeps its own.
if (typeof prototype.findNumber === "function") {
  prototype.findNumber = function findNumber(this: { desc: DescMessage }, number: number) {
    return fieldByNumber(this.desc, number);
  };
}
