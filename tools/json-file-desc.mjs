/**
 * A file descriptor from its precompiled JSON (tools/descriptor-json.mjs) with its registry, as `fileDesc()` builds
 * it: what dist/ runs for a generated file the lazy descriptors do not cover (tools/precompiled-descriptors.mjs).
 */
import { createFileRegistry } from "@bufbuild/protobuf";
import { fileDescriptorFromJson } from "./descriptor-json.mjs";

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
