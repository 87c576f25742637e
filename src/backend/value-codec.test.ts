import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import type { JsonValue } from "./types.js";
import { decodeArgumentsMap, decodeJsonValue, encodeArgumentsMap, encodeJsonValue } from "./value-codec.js";

describe("value codec", () => {
  const samples: JsonValue[] = [
    null,
    true,
    0,
    -12.5,
    "text with ünïcode",
    [],
    [1, "two", null, { three: [3] }],
    { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false },
  ];

  it.each(samples.map((s) => [JSON.stringify(s), s]))("round-trips %s", (_, sample) => {
    expect(decodeJsonValue(encodeJsonValue(sample))).toEqual(sample);
  });

  it("encodes a JSON schema as a google.protobuf.Value struct", () => {
    const value = fromBinary(ValueSchema, encodeJsonValue({ type: "object" }));
    expect(value.kind.case).toBe("structValue");
  });

  it("decodes empty bytes (a Value with no kind) as null", () => {
    expect(decodeJsonValue(new Uint8Array())).toBeNull();
  });

  it("turns an McpArgs map into JSON arguments text and back", () => {
    const args = { path: "/tmp/a", count: 3, flags: ["x"], nested: { ok: true } };
    const text = decodeArgumentsMap(encodeArgumentsMap(args));
    expect(JSON.parse(text)).toEqual(args);
  });

  it("rejects a malformed value as a protocol error naming the argument", () => {
    const broken = {
      good: toBinary(ValueSchema, { $typeName: "google.protobuf.Value", kind: { case: "numberValue", value: 1 } }),
      bad: new Uint8Array([0xff, 0xff, 0xff]),
    };
    const error = (() => {
      try {
        decodeArgumentsMap(broken);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe("backend_protocol");
    expect((error as ProxyError).message).toContain('"bad"');
  });
});
