/**
 * Lazily built protobuf descriptors (tools/build.mjs, tools/precompiled-descriptors.mjs). `fileDesc()` of
 * @bufbuild/protobuf builds, when a generated module loads, the registry of every message of its file: each field's
 * descriptor, its JSON and local names, its presence and encoding, resolved from the FileDescriptorProto by the
 * library's rules. For Cursor's ~570 messages that is most of the CPU the protocol code takes to load, and most of
 * what it allocates, while a turn touches a few dozen of them. In dist/, the build runs the library's own registry
 * over all generated files and writes what it resolved for each descriptor as data ({@link lazyFileDesc}'s first
 * argument); at run time every file, message, enum and service descriptor is made from that data at once (the names,
 * the nesting, the enums' values, the services' methods), and a message's fields, oneofs and members only when first
 * read. Nothing is decided here: every value comes from the library's registry at build time, and
 * test/cli/lazy-descriptors.test.ts holds every descriptor of every generated file equal to the one `fileDesc()` makes,
 * property by property, and the encodings alike. The FileDescriptorProto behind each descriptor (`proto`) is hydrated
 * from its precompiled JSON when first asked for (tools/descriptor-json.mjs).
 *
 * The data of a file (arrays, to keep it small):
 * - file: [protoName, name, edition, deprecated, enums, messages, services]
 * - enum: [protoIndex, name, typeName, deprecated, open, sharedPrefix (null: none), values]; value: [name, localName,
 *   number, deprecated]
 * - message: [protoIndex, name, typeName, deprecated, nestedEnums, nestedMessages, oneofs, fields, members]; oneof:
 *   [protoIndex, name, localName]; member: a field's index, or ~ a oneof's index
 * - field: [protoIndex, name, number, localName, jsonName, fieldKind, scalar, type (a message's or enum's typeName),
 *   presence, utf8Validation, listKind, mapKind, mapKey, delimitedEncoding, packed, longAsString, deprecated,
 *   oneof index (-1: none)]; null stands for undefined
 * - service: [protoIndex, name, typeName, deprecated, methods]; method: [name, localName, methodKind, input typeName,
 *   output typeName, idempotency, deprecated]
 */
import { fileDescriptorFromJson } from "./descriptor-json.mjs";

const value = (item) => (item === null ? undefined : item);
/** What the library's registry gives a singular field without an explicit default (every field of ours). */
const noDefault = () => undefined;

/** Every message and enum of `file` (nested ones too) by type name. */
function typesOf(file, into) {
  const addMessage = (message) => {
    into.set(message.typeName, message);
    for (const nested of message.nestedEnums) into.set(nested.typeName, nested);
    for (const nested of message.nestedMessages) addMessage(nested);
  };
  for (const enumeration of file.enums) into.set(enumeration.typeName, enumeration);
  for (const message of file.messages) addMessage(message);
  return into;
}

class LazyFile {
  kind = "file";
  #protoName;
  #protoJson;
  #proto = undefined;
  #types = undefined;
  constructor(data, protoJson, imports) {
    const [protoName, name, edition, deprecated, enums, messages, services] = data;
    this.#protoName = protoName;
    this.#protoJson = protoJson;
    this.deprecated = deprecated;
    this.edition = edition;
    this.name = name;
    this.dependencies = [...imports];
    this.enums = enums.map((item) => new LazyEnum(item, this, undefined));
    this.messages = messages.map((item) => new LazyMessage(item, this, undefined));
    this.extensions = [];
    this.services = services.map((item) => new LazyService(item, this));
  }
  get proto() {
    if (this.#proto === undefined) {
      const proto = fileDescriptorFromJson(this.#protoJson());
      proto.dependency = this.dependencies.map((file) => file.proto.name);
      this.#proto = proto;
    }
    return this.#proto;
  }
  /** The message or enum named `typeName`, of this file or one it imports (a field can name no other). */
  type(typeName) {
    if (this.#types === undefined) {
      const types = new Map();
      for (const dependency of this.dependencies) typesOf(dependency, types);
      this.#types = typesOf(this, types);
    }
    const type = this.#types.get(typeName);
    if (type === undefined) throw new Error(`lazy descriptors: ${typeName} not found from ${this.name}`);
    return type;
  }
  toString() {
    return `file ${this.#protoName}`;
  }
}

class LazyEnum {
  kind = "enum";
  #protoIndex;
  #proto = undefined;
  constructor(data, file, parent) {
    const [protoIndex, name, typeName, deprecated, open, sharedPrefix, values] = data;
    this.#protoIndex = protoIndex;
    this.deprecated = deprecated;
    this.file = file;
    this.parent = parent;
    this.open = open;
    this.name = name;
    this.typeName = typeName;
    this.value = {};
    this.values = values.map((item, index) => {
      const enumValue = new LazyEnumValue(item, this, index);
      this.value[enumValue.number] = enumValue;
      return enumValue;
    });
    this.sharedPrefix = value(sharedPrefix);
  }
  get proto() {
    this.#proto ??= (this.parent ?? this.file).proto.enumType[this.#protoIndex];
    return this.#proto;
  }
  toString() {
    return `enum ${this.typeName}`;
  }
}

class LazyEnumValue {
  kind = "enum_value";
  #index;
  constructor(data, parent, index) {
    const [name, localName, number, deprecated] = data;
    this.#index = index;
    this.deprecated = deprecated;
    this.parent = parent;
    this.name = name;
    this.localName = localName;
    this.number = number;
  }
  get proto() {
    return this.parent.proto.value[this.#index];
  }
  toString() {
    return `enum value ${this.parent.typeName}.${this.name}`;
  }
}

class LazyMessage {
  kind = "message";
  #protoIndex;
  #data;
  #proto = undefined;
  constructor(data, file, parent) {
    this.#protoIndex = data[0];
    this.#data = data;
    this.deprecated = data[3];
    this.file = file;
    this.parent = parent;
    this.name = data[1];
    this.typeName = data[2];
    this.nestedEnums = data[4].map((item) => new LazyEnum(item, file, this));
    this.nestedMessages = data[5].map((item) => new LazyMessage(item, file, this));
    this.nestedExtensions = [];
  }
  /**
   * Makes the fields, oneofs and members and defines them as own properties, shadowing the getters below, in the same
   * order for every message (so every built message has the same shape).
   */
  #build() {
    const [, , , , , , oneofData, fieldData, memberData] = this.#data;
    this.#data = undefined;
    const oneofs = oneofData.map((item) => new LazyOneof(item, this));
    const fields = fieldData.map((item) => new LazyField(item, this, oneofs));
    const field = {};
    for (const one of fields) {
      field[one.localName] = one;
      one.oneof?.fields.push(one);
    }
    const members = memberData.map((index) => (index >= 0 ? fields[index] : oneofs[~index]));
    own(this, "fields", fields);
    own(this, "field", field);
    own(this, "oneofs", oneofs);
    own(this, "members", members);
  }
  get fields() {
    this.#build();
    return this.fields;
  }
  get field() {
    this.#build();
    return this.field;
  }
  get oneofs() {
    this.#build();
    return this.oneofs;
  }
  get members() {
    this.#build();
    return this.members;
  }
  get proto() {
    this.#proto ??= (this.parent?.proto.nestedType ?? this.file.proto.messageType)[this.#protoIndex];
    return this.#proto;
  }
  toString() {
    return `message ${this.typeName}`;
  }
}

/** Defines `key` on `target` as a plain data property (as an assignment would, were there no getter of that name). */
function own(target, key, data) {
  Object.defineProperty(target, key, { value: data, writable: true, enumerable: true, configurable: true });
}

class LazyOneof {
  kind = "oneof";
  #protoIndex;
  constructor(data, parent) {
    const [protoIndex, name, localName] = data;
    this.#protoIndex = protoIndex;
    this.deprecated = false;
    this.parent = parent;
    this.fields = [];
    this.name = name;
    this.localName = localName;
  }
  get proto() {
    return this.parent.proto.oneofDecl[this.#protoIndex];
  }
  toString() {
    return `oneof ${this.parent.typeName}.${this.name}`;
  }
}

class LazyField {
  kind = "field";
  #protoIndex;
  constructor(data, parent, oneofs) {
    const [
      protoIndex,
      name,
      number,
      localName,
      jsonName,
      fieldKind,
      scalar,
      type,
      presence,
      utf8Validation,
      listKind,
      mapKind,
      mapKey,
      delimitedEncoding,
      packed,
      longAsString,
      deprecated,
      oneof,
    ] = data;
    this.#protoIndex = protoIndex;
    const resolved = type === null ? undefined : parent.file.type(type);
    this.deprecated = deprecated;
    this.name = name;
    this.number = number;
    this.scalar = value(scalar);
    this.message = resolved?.kind === "message" ? resolved : undefined;
    this.enum = resolved?.kind === "enum" ? resolved : undefined;
    this.presence = presence;
    this.utf8Validation = utf8Validation;
    this.listKind = value(listKind);
    this.mapKind = value(mapKind);
    this.mapKey = value(mapKey);
    this.delimitedEncoding = value(delimitedEncoding);
    this.packed = value(packed);
    this.longAsString = longAsString;
    // The registry gives singular fields a function (with no explicit default, as in every proto3 file, it returns
    // undefined), lists and maps none.
    this.getDefaultValue = fieldKind === "list" || fieldKind === "map" ? undefined : noDefault;
    this.parent = parent;
    this.oneof = oneof < 0 ? undefined : oneofs[oneof];
    this.localName = localName;
    this.jsonName = jsonName;
    this.fieldKind = fieldKind;
  }
  get proto() {
    return this.parent.proto.field[this.#protoIndex];
  }
  toString() {
    return `field ${this.parent.typeName}.${this.name}`;
  }
}

class LazyService {
  kind = "service";
  #protoIndex;
  #proto = undefined;
  constructor(data, file) {
    const [protoIndex, name, typeName, deprecated, methods] = data;
    this.#protoIndex = protoIndex;
    this.deprecated = deprecated;
    this.file = file;
    this.name = name;
    this.typeName = typeName;
    this.methods = methods.map((item, index) => new LazyMethod(item, this, index));
    this.method = {};
    for (const method of this.methods) this.method[method.localName] = method;
  }
  get proto() {
    this.#proto ??= this.file.proto.service[this.#protoIndex];
    return this.#proto;
  }
  toString() {
    return `service ${this.typeName}`;
  }
}

class LazyMethod {
  kind = "rpc";
  #index;
  constructor(data, parent, index) {
    const [name, localName, methodKind, input, output, idempotency, deprecated] = data;
    this.#index = index;
    this.deprecated = deprecated;
    this.parent = parent;
    this.name = name;
    this.localName = localName;
    this.methodKind = methodKind;
    this.input = parent.file.type(input);
    this.output = parent.file.type(output);
    this.idempotency = idempotency;
  }
  get proto() {
    return this.parent.proto.method[this.#index];
  }
  toString() {
    return `rpc ${this.parent.typeName}.${this.name}`;
  }
}

/**
 * `fileDesc()` of @bufbuild/protobuf/codegenv2 for a file the build resolved to `data` (see above), its
 * FileDescriptorProto precompiled to the JSON `protoJson` returns; `imports` are the files it imports, as `fileDesc()`
 * gets them. The JSON comes from a function, called when a `proto` is first hydrated (no turn does), so that its
 * string is compiled only then: as an argument at a module's top it was in every start's code cache (a third of the
 * generated code's, about 220 KB) and in the heap from the module's load on.
 */
export function lazyFileDesc(data, protoJson, imports) {
  return new LazyFile(JSON.parse(data), protoJson, imports ?? []);
}
