/**
 * native-tool-decode.ts against the generated schema: its layouts say what the schema says, and generated messages
 * decode exactly as `fromBinary` decodes them (native-tool-wire.test.ts: given frames).
 */
import { create, type DescField, type DescMessage, fromBinary, ScalarType, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { SERVER_MESSAGE } from "./native-tool-call-layouts.js";
import { decodeNativeToolMessage } from "./native-tool-decode.js";
import {
  BOOL,
  BYTES,
  type FieldLayout,
  INT32,
  INT64,
  type MessageLayout,
  STRING,
  UINT32,
  UINT64,
} from "./native-tool-layouts.js";
import { decodeServerMessage } from "./run-stream.js";

type Init = Record<string, unknown>;
const encode = (init: Init) => toBinary(AgentServerMessageSchema, create(AgentServerMessageSchema, init as never));
function expectSame(frame: Uint8Array) {
  const expected = fromBinary(AgentServerMessageSchema, frame);
  const decoded = decodeNativeToolMessage(frame);
  expect(decoded).toBeDefined();
  expect(decoded).toStrictEqual(expected);
  expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
}

/** Every layout reachable from the server message's. */
function layouts(): MessageLayout[] {
  const seen = new Set<MessageLayout>();
  const visit = (layout: MessageLayout) => {
    if (seen.has(layout)) return;
    seen.add(layout);
    for (const f of layout.fields) if (typeof f.type !== "number") visit(f.type);
  };
  visit(SERVER_MESSAGE);
  return [...seen];
}

/** Every message descriptor reachable from AgentServerMessage, by type name. */
function descriptors(): Map<string, DescMessage> {
  const found = new Map<string, DescMessage>();
  const visit = (desc: DescMessage) => {
    if (found.has(desc.typeName)) return;
    found.set(desc.typeName, desc);
    for (const f of desc.fields) if (f.message !== undefined) visit(f.message);
  };
  visit(AgentServerMessageSchema);
  return found;
}

const SCALARS: Record<number, ScalarType> = {
  [STRING]: ScalarType.STRING,
  [BYTES]: ScalarType.BYTES,
  [BOOL]: ScalarType.BOOL,
  [UINT32]: ScalarType.UINT32,
  [INT64]: ScalarType.INT64,
  [UINT64]: ScalarType.UINT64,
};

/** What the layout says about a field, in the descriptor's terms. */
function describeLayout(f: FieldLayout) {
  const message = typeof f.type === "number" ? undefined : f.type.typeName;
  return {
    number: f.no,
    localName: f.localName,
    kind: f.list ? "list" : f.map ? "map" : message !== undefined ? "message" : f.type === INT32 ? "int32" : "scalar",
    type: message ?? (f.type === INT32 ? ScalarType.INT32 : SCALARS[f.type as number]),
    explicit: f.explicit,
    oneof: f.oneof,
  };
}

function describeField(f: DescField) {
  const base = { number: f.number, localName: f.localName, oneof: f.oneof?.localName };
  const explicit = f.fieldKind !== "list" && f.fieldKind !== "map" && f.oneof === undefined && f.presence !== 2;
  switch (f.fieldKind) {
    case "list":
      return { ...base, kind: "list", type: f.message?.typeName ?? f.scalar, explicit };
    case "map":
      expect(f.mapKey).toBe(ScalarType.STRING);
      return { ...base, kind: "map", type: f.message?.typeName ?? f.scalar, explicit };
    case "message":
      return { ...base, kind: "message", type: f.message.typeName, explicit };
    case "enum":
      return { ...base, kind: "int32", type: ScalarType.INT32, explicit };
    default:
      return { ...base, kind: f.scalar === ScalarType.INT32 ? "int32" : "scalar", type: f.scalar, explicit };
  }
}

describe("native tool layouts", () => {
  it("say what the generated schema says of every field they list, and list every field with a default", () => {
    const descs = descriptors();
    for (const layout of layouts()) {
      const desc = descs.get(layout.typeName);
      expect(desc, layout.typeName).toBeDefined();
      if (desc === undefined) continue;
      for (const f of layout.fields) {
        const field = desc.fields.find((d) => d.number === f.no);
        expect(field, `${layout.typeName}.${f.localName}`).toBeDefined();
        if (field !== undefined) expect(describeLayout(f), layout.typeName).toEqual(describeField(field));
      }
      for (const field of desc.fields) {
        if (field.oneof !== undefined || describeField(field).explicit) continue;
        expect(layout.byNumber.has(field.number), `${layout.typeName}.${field.localName}`).toBe(true);
      }
    }
  });
});

/** A small deterministic generator. */
function generator(seed: number) {
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    // The high bits: an LCG's low bits cycle quickly (its lowest alternates), so `seed % n` covered little.
    return Math.floor((seed / 0x80000000) * n);
  };
  const text = () => ["", "a", "é", "🙂x", "/work/src/ünï.ts", "call_42", "y".repeat(rand(300))][rand(7)] as string;
  const scalar = (type: ScalarType): unknown => {
    switch (type) {
      case ScalarType.STRING:
        return text();
      case ScalarType.BYTES:
        return Uint8Array.from({ length: rand(40) }, (_, i) => (i * 31 + seed) & 0xff);
      case ScalarType.BOOL:
        return rand(2) === 1;
      case ScalarType.INT64:
      case ScalarType.UINT64:
        return BigInt(rand(3) === 0 ? 2 ** 48 + rand(1000) : rand(100_000));
      default:
        return [0, 1, 127, 128, 2 ** 31 - 1, rand(70_000)][rand(6)];
    }
  };
  return { rand, text, scalar };
}

/** A random init of `desc` with `take(field)` fields (each oneof one case at most), `depth` messages deep at most. */
function randomInit(
  g: ReturnType<typeof generator>,
  desc: DescMessage,
  depth: number,
  take: (field: DescField) => boolean,
): Init {
  const init: Init = {};
  const value = (field: DescField): unknown => {
    if (field.message !== undefined) return randomInit(g, field.message, depth - 1, take);
    if (field.fieldKind === "enum") return g.rand(3);
    return g.scalar(field.scalar as ScalarType);
  };
  for (const oneof of desc.oneofs) {
    const cases = oneof.fields.filter((f) => take(f) && (f.message === undefined || depth > 0));
    const field = cases[g.rand(cases.length + 1)];
    if (field !== undefined) init[oneof.localName] = { case: field.localName, value: value(field) };
  }
  for (const field of desc.fields) {
    if (field.oneof !== undefined || !take(field) || g.rand(3) === 0) continue;
    if (field.message !== undefined && depth <= 0) continue;
    if (field.fieldKind === "list") init[field.localName] = Array.from({ length: g.rand(3) }, () => value(field));
    else if (field.fieldKind === "map") {
      init[field.localName] = Object.fromEntries(
        Array.from({ length: g.rand(3) }, (_, i) => [`${g.text()}${i}`, value(field)]),
      );
    } else init[field.localName] = value(field);
  }
  return init;
}

describe("decodeNativeToolMessage on generated messages", () => {
  const descs = descriptors();
  const read = new Map(layouts().map((l) => [l.typeName, l]));
  /** A field of a layout read here. */
  const inLayouts = (field: DescField) => read.get(field.parent.typeName)?.byNumber.get(field.number) !== undefined;

  it("decodes messages of the layouts exactly as fromBinary does", () => {
    const g = generator(7);
    for (let i = 0; i < 400; i++) {
      const frame = encode(randomInit(g, AgentServerMessageSchema, 10, inLayouts));
      // A message without a case (no bytes at all) is not one of the layouts.
      if (frame.length > 0) expectSame(frame);
    }
  });

  it("decodes any tool-call update or exec exactly as fromBinary does, or leaves it to fromBinary", () => {
    const g = generator(3);
    const outer = new Set(["agent.v1.AgentServerMessage", "agent.v1.InteractionUpdate", "agent.v1.ExecServerMessage"]);
    // Every field of the messages inside, but only the layouts' cases of the outer oneofs.
    const take = (field: DescField) => !outer.has(field.parent.typeName) || inLayouts(field);
    let fast = 0;
    for (let i = 0; i < 400; i++) {
      const frame = encode(randomInit(g, AgentServerMessageSchema, 6, take));
      const expected = fromBinary(AgentServerMessageSchema, frame);
      const decoded = decodeNativeToolMessage(frame);
      if (decoded !== undefined) {
        fast++;
        expect(decoded).toStrictEqual(expected);
      }
      expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
    }
    expect(fast).toBeGreaterThan(40);
    expect(descs.size).toBeGreaterThan(read.size);
  });
});
