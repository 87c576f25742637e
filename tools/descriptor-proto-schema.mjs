/**
 * The schema of google.protobuf.FileDescriptorProto, which hydrates a precompiled descriptor's `proto`
 * (tools/descriptor-json.mjs). Imported from the library's well-known types here, at build time and under the tests;
 * in dist/, the build puts a module in its place that boots descriptor.proto on the first call
 * (`lazyDescriptorProtoSchemaSource` in tools/precompiled-descriptors.mjs): booting it (every message of
 * descriptor.proto built into a registry) took 4–6 ms of CPU when the protocol code loaded, and only a `proto`
 * asked for needs it, which nothing on a turn's path does.
 */
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/** The FileDescriptorProto schema. */
export function fileDescriptorProtoSchema() {
  return FileDescriptorProtoSchema;
}
