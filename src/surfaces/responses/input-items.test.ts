import { describe, expect, it } from "vitest";
import { listInputItems } from "./input-items.js";

const input = [
  "raw",
  { role: "user", content: "one" },
  { type: "message", id: "msg_given", role: "assistant", content: "two" },
  { type: "function_call_output", call_id: "c1", output: "42" },
];
const ids = (list: { data: unknown[] }) => list.data.map((item) => (item as { id: string }).id);

describe("listInputItems", () => {
  it("gives every item an id and a message's string content as a text part, newest first", () => {
    const list = listInputItems("resp_abc", input, {});
    expect(ids(list)).toEqual(["fco_abc_3", "msg_given", "msg_abc_1", "msg_abc_0"]);
    expect(list.data[1]).toEqual({
      id: "msg_given",
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "two" }],
    });
    expect(list.data[2]).toMatchObject({ role: "user", content: [{ type: "input_text", text: "one" }] });
    expect(list).toMatchObject({ object: "list", first_id: "fco_abc_3", last_id: "msg_abc_0", has_more: false });
  });

  it("a cursor id not found is named in the 400 clamped, however long", () => {
    const id = "x".repeat(100_000);
    const error = (() => {
      try {
        listInputItems("resp_1", [{ role: "user", content: "hi" }], { after: id });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toContain("no input item with id 'xxx");
    expect(error?.message.length).toBeLessThan(400);
  });

  it("pages after and before an item id, in either order", () => {
    const after = listInputItems("resp_abc", input, { order: "asc", limit: "2", after: "msg_abc_0" });
    expect(ids(after)).toEqual(["msg_abc_1", "msg_given"]);
    expect(after.has_more).toBe(true);
    const before = listInputItems("resp_abc", input, { order: "asc", limit: "2", before: "fco_abc_3" });
    expect(ids(before)).toEqual(["msg_abc_1", "msg_given"]);
    expect(before.has_more).toBe(true);
    const between = listInputItems("resp_abc", input, { order: "asc", after: "msg_abc_0", before: "fco_abc_3" });
    expect(ids(between)).toEqual(["msg_abc_1", "msg_given"]);
    expect(between.has_more).toBe(false);
  });

  it.each([
    [{ limit: "0" }, "limit"],
    [{ limit: "101" }, "limit"],
    [{ limit: "2.5" }, "limit"],
    [{ order: "up" }, "order"],
    [{ after: "msg_nope" }, "after"],
    [{ before: "msg_nope" }, "before"],
  ])("refuses %j naming %s", (query, param) => {
    expect(() => listInputItems("resp_abc", input, query)).toThrow(expect.objectContaining({ status: 400, param }));
  });
});
