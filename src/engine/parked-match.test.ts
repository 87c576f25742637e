import { describe, expect, it } from "vitest";
import { historyKeyPrefixes } from "../backend/history-fingerprint.js";
import type { HistoryMessage } from "../backend/types.js";
import { callsKey, claimedOrigin, originMismatch, toolNamesOf } from "./parked-match.js";

const parking: HistoryMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "ALPHA" },
];
const call = { id: "call_1", name: "get_weather", arguments: '{"city":"Paris","days":2}' };
const tools = [{ name: "get_weather" }, { name: "get_time" }];
const parked = {
  requestKey: historyKeyPrefixes(parking).at(-1) ?? "",
  callsKey: callsKey([call]),
  ranAs: "composer-1",
  toolNames: toolNamesOf(tools),
};

function claimed(messages: HistoryMessage[], ranAs = "composer-1", declared: { name: string }[] = tools) {
  return originMismatch(parked, claimedOrigin(messages, historyKeyPrefixes(messages), ranAs, declared));
}

describe("the request that may resume a parked turn", () => {
  it("continues the parking request's history with the very calls it handed out", () => {
    const result: HistoryMessage = { role: "tool", toolCallId: "call_1", content: "sunny" };
    const echoed = { ...call, arguments: '{ "days": 2, "city": "Paris" }' };
    expect(claimed([...parking, { role: "assistant", content: "x", toolCalls: [echoed] }, result])).toBeUndefined();
    // Another system prompt, and the text and calls split over two assistant messages (Responses items).
    const split: HistoryMessage[] = [
      { role: "system", content: "Another prompt." },
      { role: "user", content: "ALPHA" },
      { role: "assistant", content: "Checking.", toolCalls: [] },
      { role: "assistant", content: "", toolCalls: [call] },
      result,
    ];
    expect(claimed(split)).toBeUndefined();
  });

  it("names what changed otherwise", () => {
    const result: HistoryMessage = { role: "tool", toolCallId: "call_1", content: "sunny" };
    const assistant: HistoryMessage = { role: "assistant", content: "", toolCalls: [call] };
    expect(claimed([parking[0]!, { role: "user", content: "BETA" }, assistant, result])).toBe(
      "the history before the tool calls changed",
    );
    const edited = { role: "assistant" as const, content: "", toolCalls: [{ ...call, arguments: '{"city":"Rome"}' }] };
    expect(claimed([...parking, edited, result])).toBe("the tool calls changed");
    const renamed = { role: "assistant" as const, content: "", toolCalls: [{ ...call, name: "get_time" }] };
    expect(claimed([...parking, renamed, result])).toBe("the tool calls changed");
    expect(claimed([...parking, result])).toBe("no assistant message holds the answered calls");
    const resuming: HistoryMessage[] = [...parking, assistant, result];
    expect(claimed(resuming)).toBeUndefined();
    expect(claimed(resuming, "gpt-5.2")).toBe("the model changed from composer-1 to gpt-5.2");
    // A tool added since is fine; one the Run offers that is no longer declared is not.
    expect(claimed(resuming, "composer-1", [...tools, { name: "new_tool" }])).toBeUndefined();
    expect(claimed(resuming, "composer-1", [{ name: "get_weather" }])).toBe(
      "a tool the turn offered is no longer declared",
    );
  });

  it("takes empty arguments as {}", () => {
    expect(callsKey([{ ...call, arguments: "" }])).toBe(callsKey([{ ...call, arguments: " {} " }]));
  });
});
