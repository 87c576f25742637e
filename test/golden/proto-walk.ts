/**
 * Helpers for the golden vector tests: find unknown fields anywhere in a decoded message, and compare a decoded
 * message with an older decoder's JSON (docs/protocol.md §7, vectors/README.md).
 */

import type { Message } from "@bufbuild/protobuf";
import { type DescMessage, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { base64Encode } from "@bufbuild/protobuf/wire";

/**
 * Lists every place in the message tree that still carries unknown fields, as `path (type): field numbers`.
 * Walks singular messages, repeated messages and message-valued maps.
 */
export function findUnknownFields(schema: DescMessage, message: Message): string[] {
  const found: string[] = [];
  walk(reflect(schema, message), schema.typeName, found);
  return found;
}

function walk(node: ReflectMessage, path: string, found: string[]): void {
  const unknown = node.getUnknown();
  if (unknown !== undefined && unknown.length > 0) {
    found.push(`${path} (${node.desc.typeName}): fields ${unknown.map((field) => field.no).join(", ")}`);
  }
  for (const field of node.fields) {
    if (!node.isSet(field)) continue;
    const fieldPath = `${path}.${field.name}`;
    if (field.fieldKind === "message") {
      walk(node.get(field), fieldPath, found);
    } else if (field.fieldKind === "list" && field.listKind === "message") {
      let index = 0;
      for (const item of node.get(field)) walk(item as ReflectMessage, `${fieldPath}[${index++}]`, found);
    } else if (field.fieldKind === "map" && field.mapKind === "message") {
      for (const [key, value] of node.get(field)) walk(value as ReflectMessage, `${fieldPath}[${String(key)}]`, found);
    }
  }
}

/**
 * Checks that every field of `expected` (an older decoder's toJson output) is present and equal in our decoding.
 * Ours may contain more. Where `expected` holds a base64 string but our schema has a message (the older descriptor
 * typed e.g. glob args as bytes), our sub-message is re-serialised and its base64 must equal the string.
 * Returns a list of mismatch descriptions (empty = match). Enums are compared as integers, as in the vectors.
 */
export function compareWithOlderDecoding(schema: DescMessage, message: Message, expected: unknown): string[] {
  const mismatches: string[] = [];
  const ours = toJson(schema, message, { enumAsInteger: true });
  compareMessage(reflect(schema, message), ours, expected, schema.typeName, mismatches);
  return mismatches;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function compareMessage(node: ReflectMessage, ours: JsonValue, expected: unknown, path: string, out: string[]): void {
  if (!isJsonObject(expected) || !isJsonObject(ours)) {
    out.push(`${path}: expected an object on both sides, got ${JSON.stringify(expected)} vs ${JSON.stringify(ours)}`);
    return;
  }
  for (const [key, want] of Object.entries(expected)) {
    const fieldPath = `${path}.${key}`;
    const field = node.fields.find((candidate) => candidate.jsonName === key);
    if (field === undefined) {
      out.push(`${fieldPath}: no such field in ${node.desc.typeName}`);
      continue;
    }
    const got = ours[key] as JsonValue | undefined;
    if (got === undefined) {
      out.push(`${fieldPath}: missing in our decoding (expected ${JSON.stringify(want)})`);
      continue;
    }
    if (field.fieldKind === "message") {
      const child = node.get(field);
      if (typeof want === "string" && isJsonObject(got)) {
        const reserialised = base64Encode(toBinary(field.message, child.message));
        if (reserialised !== want) out.push(`${fieldPath}: re-serialised ${reserialised} != older bytes ${want}`);
      } else {
        compareMessage(child, got, want, fieldPath, out);
      }
    } else if (field.fieldKind === "list" && field.listKind === "message") {
      const items = [...node.get(field)] as ReflectMessage[];
      if (!Array.isArray(want) || !Array.isArray(got) || want.length !== items.length) {
        out.push(`${fieldPath}: list length/shape differs`);
        continue;
      }
      want.forEach((item, index) => {
        compareMessage(items[index] as ReflectMessage, got[index] as JsonValue, item, `${fieldPath}[${index}]`, out);
      });
    } else if (field.fieldKind === "map" && field.mapKind === "message") {
      const entries = new Map([...node.get(field)].map(([k, v]) => [String(k), v as ReflectMessage]));
      if (!isJsonObject(want) || !isJsonObject(got)) {
        out.push(`${fieldPath}: map shape differs`);
        continue;
      }
      for (const [mapKey, mapWant] of Object.entries(want)) {
        const entry = entries.get(mapKey);
        if (entry === undefined) out.push(`${fieldPath}[${mapKey}]: missing`);
        else compareMessage(entry, got[mapKey] as JsonValue, mapWant, `${fieldPath}[${mapKey}]`, out);
      }
    } else if (JSON.stringify(got) !== JSON.stringify(want)) {
      out.push(`${fieldPath}: ${JSON.stringify(got)} != expected ${JSON.stringify(want)}`);
    }
  }
}
