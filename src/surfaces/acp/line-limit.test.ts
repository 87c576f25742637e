import { describe, expect, it } from "vitest";
import { idOf, limitLines, TOO_LARGE_METHOD } from "./line-limit.js";

async function through(chunks: string[], limit: number) {
  const encoder = new TextEncoder();
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const dropped: Array<{ id: number | string | undefined; bytes: number }> = [];
  const reader = limitLines(input, { limit, onDropped: (info) => dropped.push(info) }).getReader();
  let text = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { lines: text.split("\n").filter((l) => l !== ""), dropped };
}

describe("the JSON-RPC line limit", () => {
  it("reads the id at the start of a line", () => {
    expect(idOf('{"jsonrpc":"2.0","id":7,"method":"x"')).toBe(7);
    expect(idOf('{"id" : "a\\"b", "method":"x"')).toBe('a"b');
    expect(idOf('{"jsonrpc":"2.0","method":"session/cancel","params":{')).toBeUndefined();
  });

  it("passes lines within the limit and replaces one over it, split across chunks, by a stand-in request", async () => {
    const big = `{"jsonrpc":"2.0","id":42,"method":"session/prompt","params":{"text":"${"x".repeat(100)}"}}`;
    const { lines, dropped } = await through(
      ['{"id":1}\n{"id"', ":2}\n", big.slice(0, 30), big.slice(30, 80), `${big.slice(80)}\n{"id":3}\n`],
      64,
    );
    expect(lines).toEqual([
      '{"id":1}',
      '{"id":2}',
      JSON.stringify({
        jsonrpc: "2.0",
        id: 42,
        method: TOO_LARGE_METHOD,
        params: { bytes: big.length + 1, limit: 64 },
      }),
      '{"id":3}',
    ]);
    expect(dropped).toEqual([{ id: 42, bytes: big.length + 1 }]);
  });

  it("drops an over-limit notification without a stand-in, and a last line without a newline", async () => {
    const note = `{"jsonrpc":"2.0","method":"session/cancel","params":{"pad":"${"y".repeat(100)}"}}`;
    const { lines, dropped } = await through([`${note}\n`, '{"id":5}\n', '{"id":6}'], 64);
    expect(lines).toEqual(['{"id":5}', '{"id":6}']);
    expect(dropped).toEqual([{ id: undefined, bytes: note.length + 1 }]);
  });
});
