import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { describe, expect, it } from "vitest";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { RequestContextSchema } from "../../gen/agent/v1/request_context_pb.js";
import "./field-index.js";

describe("field-index", () => {
  it("answers findNumber with the type's own field for every number, and nothing for an unknown one", () => {
    for (const desc of [AgentServerMessageSchema, RequestContextSchema]) {
      const message = reflect(desc);
      for (const field of desc.fields) expect(message.findNumber(field.number)).toBe(field);
      expect(message.findNumber(536_870_000)).toBeUndefined();
      // A second object of the same type shares the one index and gives the same answers.
      expect(reflect(desc).findNumber(desc.fields[0]?.number ?? 1)).toBe(desc.fields[0]);
    }
  });

  it("decodes nested messages and keeps unknown fields as before", () => {
    const context = create(RequestContextSchema, {
      env: { osVersion: "linux", workspacePaths: ["/w"], shell: "bash", timeZone: "UTC", projectFolder: "/w" },
      cloudRule: "be brief",
    });
    const bytes = toBinary(RequestContextSchema, context);
    // Field 536870000, varint 7: unknown to the type.
    const withUnknown = new Uint8Array([...bytes, 0x80, 0xb7, 0xff, 0xff, 0x0f, 7]);
    const decoded = fromBinary(RequestContextSchema, withUnknown);
    expect(decoded.env?.shell).toBe("bash");
    expect(decoded.cloudRule).toBe("be brief");
    expect(decoded.$unknown?.length).toBe(1);
    expect(toBinary(RequestContextSchema, decoded)).toEqual(withUnknown);
  });
});
