import { describe, expect, it } from "vitest";
import {
  answerKey,
  canonicalJson,
  EMPTY_HISTORY_KEY,
  echoedAnswer,
  HistoryKeyPrefixes,
  historyKey,
  historyKeyPrefixes,
} from "./history-fingerprint.js";
import type { HistoryMessage } from "./types.js";

const history: HistoryMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "List files" },
  { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "ls", arguments: '{"path":".","all":true}' }] },
  { role: "tool", toolCallId: "c1", content: "a.txt\nb.txt" },
  { role: "assistant", content: "Two files.", toolCalls: [] },
];

function withMessage(index: number, message: HistoryMessage): HistoryMessage[] {
  return history.map((existing, i) => (i === index ? message : existing));
}

describe("historyKey", () => {
  const base = historyKey(history);

  it("is a stable SHA-256 hex digest", () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(historyKey(structuredClone(history))).toBe(base);
    expect(historyKey([])).toBe(EMPTY_HISTORY_KEY);
  });

  it("ignores formatting noise: key order and spacing in tool args, surrounding whitespace, CRLF, echoed think tags", () => {
    const noisy: HistoryMessage[] = [
      { role: "system", content: "  Be brief.\r\n" },
      { role: "user", content: "List files \n" },
      {
        role: "assistant",
        content: "\n",
        toolCalls: [{ id: "c1", name: "ls", arguments: '{ "all": true,\n "path": "." }' }],
      },
      { role: "tool", toolCallId: "c1", content: "a.txt\r\nb.txt\n" },
      { role: "assistant", content: "<think>hmm</think>\n\nTwo files.", toolCalls: [] },
    ];
    expect(historyKey(noisy)).toBe(base);
  });

  it("changes with every real difference", () => {
    const variants: HistoryMessage[][] = [
      withMessage(1, { role: "user", content: "List Files" }),
      withMessage(1, {
        role: "user",
        content: "List files",
        images: [{ mimeType: "image/png", data: new Uint8Array([1]) }],
      }),
      withMessage(2, {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c2", name: "ls", arguments: '{"path":".","all":true}' }],
      }),
      withMessage(2, {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "dir", arguments: '{"path":".","all":true}' }],
      }),
      withMessage(2, {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "ls", arguments: '{"path":"/","all":true}' }],
      }),
      withMessage(3, { role: "tool", toolCallId: "c1", content: "a.txt" }),
      withMessage(4, { role: "assistant", content: "Three files.", toolCalls: [] }),
      history.slice(0, 4),
      [...history, { role: "user", content: "thanks" }],
      [history[0]!, history[3]!, history[2]!, history[1]!, history[4]!],
    ];
    const fingerprints = variants.map(historyKey);
    for (const fingerprint of fingerprints) expect(fingerprint).not.toBe(base);
    expect(new Set(fingerprints).size).toBe(variants.length);
  });

  it("ignores system/developer messages anywhere in the list: they are instructions, not history", () => {
    const rewritten: HistoryMessage[] = [
      { role: "system", content: "A different system prompt" },
      history[1]!,
      { role: "system", content: "<system-reminder>rewritten on every request</system-reminder>" },
      ...history.slice(2),
    ];
    expect(historyKey(rewritten)).toBe(base);
    expect(historyKey(history.slice(1))).toBe(base);
  });

  it("does not confuse content boundaries between fields", () => {
    const a: HistoryMessage[] = [{ role: "user", content: 'a","b' }];
    const b: HistoryMessage[] = [
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ];
    expect(historyKey(a)).not.toBe(historyKey(b));
  });
});

describe("historyKeyPrefixes", () => {
  it("gives the fingerprint of every prefix, so a stored reply is found from the next request", () => {
    const prefixes = historyKeyPrefixes(history);
    expect(prefixes).toHaveLength(history.length);
    prefixes.forEach((fingerprint, index) => {
      expect(fingerprint).toBe(historyKey(history.slice(0, index + 1)));
    });
    const nextRequest = [...history, { role: "user" as const, content: "And hidden ones?" }];
    expect(historyKeyPrefixes(nextRequest)[history.length - 1]).toBe(historyKey(history));
  });

  it("computed on demand, in any order, gives the same keys", () => {
    const keys = new HistoryKeyPrefixes(history);
    expect(keys.at(3)).toBe(historyKey(history.slice(0, 4)));
    expect(keys.at(0)).toBe(EMPTY_HISTORY_KEY);
    expect(keys.at(-1)).toBeUndefined();
    expect(keys.at(history.length)).toBeUndefined();
    expect(keys.last()).toBe(historyKey(history));
    expect(keys.all()).toEqual(historyKeyPrefixes(history));
    expect(new HistoryKeyPrefixes([]).last()).toBe(EMPTY_HISTORY_KEY);
  });
});

describe("canonicalJson", () => {
  it("sorts keys recursively and strips whitespace, keeping arrays in order", () => {
    expect(canonicalJson('{"b": [ {"y":1,"x":2} ], "a": "é"}')).toBe('{"a":"é","b":[{"x":2,"y":1}]}');
  });

  it("falls back to trimmed text for invalid JSON", () => {
    expect(canonicalJson("  {not json ")).toBe("{not json");
  });
});

describe("answerKey", () => {
  const input = historyKey(history.slice(0, 2));
  const ls = { id: "c1", name: "ls", arguments: '{"path":".","all":true}' };

  it("is what the engine records from the answer it handed out and what the echoed messages give back", () => {
    const handedOut = answerKey(input, { text: "", toolCalls: [ls] });
    expect(answerKey(input, echoedAnswer(history, 2, 3))).toBe(handedOut);
    // The tool message between is the client's input, not part of the answer.
    expect(answerKey(input, echoedAnswer(history, 2, 4))).toBe(handedOut);
  });

  it("ignores whitespace, a leading think block and how the text is split over messages", () => {
    const key = answerKey(input, { text: "Two files: a and b.", toolCalls: [] });
    const split: HistoryMessage[] = [
      { role: "assistant", content: "<think>counting</think>Two files:\n", toolCalls: [] },
      { role: "assistant", content: "  a and\r\n b. ", toolCalls: [] },
    ];
    expect(answerKey(input, echoedAnswer(split, 0, 2))).toBe(key);
  });

  it("differs for another text, other calls (id, name or arguments), or another input", () => {
    const text = answerKey(input, { text: "Two files.", toolCalls: [] });
    expect(answerKey(input, { text: "Three files.", toolCalls: [] })).not.toBe(text);
    expect(answerKey(historyKey(history.slice(0, 1)), { text: "Two files.", toolCalls: [] })).not.toBe(text);
    const calls = answerKey(input, { text: "Let me look.", toolCalls: [ls] });
    expect(answerKey(input, { text: "Let me look.", toolCalls: [{ ...ls, id: "c2" }] })).not.toBe(calls);
    expect(answerKey(input, { text: "Let me look.", toolCalls: [{ ...ls, name: "dir" }] })).not.toBe(calls);
    expect(answerKey(input, { text: "Let me look.", toolCalls: [{ ...ls, arguments: '{"path":"/"}' }] })).not.toBe(
      calls,
    );
    expect(answerKey(input, { text: "Let me look.", toolCalls: [ls, { ...ls, id: "c2" }] })).not.toBe(calls);
    expect(calls).not.toBe(answerKey(input, { text: "Let me look.", toolCalls: [] }));
  });

  it("of an answer with tool calls is its calls: the text beside them dropped, arguments re-serialised, still matches", () => {
    const handedOut = answerKey(input, { text: "Let me look.", toolCalls: [ls] });
    const echoed = { ...ls, arguments: '{ "all": true, "path": "." }' };
    const dropped: HistoryMessage[] = [{ role: "assistant", content: "", toolCalls: [echoed] }];
    expect(answerKey(input, echoedAnswer(dropped, 0, 1))).toBe(handedOut);
  });
});
