/**
 * Bytes serve allocates per request, and where: one serve on a bench emulator, one-token streaming chat completions
 * (warm-up first), sampled with V8's sampling heap profiler (bench/alloc-hook.mjs, preloaded; it counts objects
 * collected since, so the sum is what was allocated, not what survived). Prints bytes per request and the largest
 * allocation sites (self bytes per request, function and source position in dist/).
 *
 * With `--tool`, each request is instead answered by one client tool call and parks on it (the `read` tool of
 * bench/workload.ts, a new conversation each time; every request stays parked until serve exits). With `--native`,
 * the call is instead one of Cursor's own tools (serve run with `--cursor-tools native`), redirected to the request's
 * tool of that kind (docs/protocol.md §5.2): `read` by default, or `--native=ls|grep|shell`, parked the same way.
 *
 * Usage: `npx tsx bench/alloc-profile.ts [--tool | --native[=KIND]] [--concurrency=1] [--n=2000] [--warmup=1500]
 * [--top=30] [--bin=<checkout>/bin/cursor-bridge.js]`
 */

import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRemoteEmulator } from "./remote-emulator.js";
import { startServe } from "./serve-process.js";
import { streamCompletion } from "./sse-client.js";
import { OPENAI_TOOLS } from "./workload.js";

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const concurrency = Number(option("concurrency") ?? 1);
const n = Number(option("n") ?? 2000);
const warmup = Number(option("warmup") ?? 1500);
const top = Number(option("top") ?? 30);
const short = { model: "auto", messages: [{ role: "user", content: "[[emu:tokens 1]] [[emu:rate 5000]] probe" }] };
const native = process.argv.includes("--native") ? "read" : option("native");
const tool = process.argv.includes("--tool") || native !== undefined;
/** The directive of request `i`: a client tool call, or a native one of kind `native`. */
const directive = (i: number) => {
  const path = `/repo/file-${i}.ts`;
  if (native === undefined) return `[[emu:tool read {"filePath":"${path}"}]]`;
  const args = { read: { path }, ls: { path: "/repo/src" }, grep: { pattern: `TODO ${i}`, path: "/repo" } }[native];
  return `[[emu:native ${native} ${JSON.stringify(args ?? { command: `wc -l ${path}` })}]]`;
};
let requests = 0;
const body = () => {
  if (!tool) return short;
  const content = `Check file ${++requests} ${directive(requests)}`;
  return { model: "auto", messages: [{ role: "user", content }], tools: OPENAI_TOOLS };
};

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: Node[];
}

const out = join(mkdtempSync(join(tmpdir(), "bench-alloc-")), "serve.heapprofile");
process.env.BENCH_SERVE_NODE_ARGS = `${process.env.BENCH_SERVE_NODE_ARGS ?? ""} --import ${new URL("./alloc-hook.mjs", import.meta.url).href}`;
const emulator = await startRemoteEmulator({ heartbeatIntervalMs: 1000, bootstrapLatencyMs: 0, tokensPerSecond: 50 });
const serve = await startServe({
  emulatorUrl: emulator.url,
  ...(option("bin") === undefined ? {} : { bin: option("bin") as string }),
  sourceMapped: true,
  // Cursor's model sees its own tools only when serve offers them.
  env: { BENCH_ALLOC_PROFILE: out, ...(native === undefined ? {} : { CURSOR_BRIDGE_CURSOR_TOOLS: "native" }) },
});
const run = async (count: number) => {
  let left = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const r = await streamCompletion(serve.baseURL, body());
        if (tool && r.finishReason !== "tool_calls")
          throw new Error(`did not park (finish_reason ${r.finishReason}): ${r.text}`);
      }
    }),
  );
};
try {
  await run(warmup);
  process.kill(serve.pid, "SIGUSR2");
  await new Promise((r) => setTimeout(r, 200));
  await run(n);
  process.kill(serve.pid, "SIGUSR2");
  for (let i = 0; i < 600 && !existsSync(out); i++) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 500));
} finally {
  await serve.close();
  await emulator.close();
}
const root = JSON.parse(readFileSync(out, "utf8")).head as Node;
const sites = new Map<string, number>();
let total = 0;
// A builtin (Map, Array.prototype.map, …: no url) is named with the nearest caller that has a source position.
const walk = (node: Node, caller: string) => {
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  const here = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${lineNumber + 1}:${columnNumber + 1}`;
  const key = url === "" ? `${functionName || "(anonymous)"} in ${caller}` : here;
  sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const child of node.children) walk(child, url === "" ? caller : here);
};
walk(root, "(root)");
const kind = native !== undefined ? `native ${native} ` : tool ? "tool-call " : "";
console.log(`${option("bin") ?? "this checkout"}: ${concurrency} concurrent, ${n} ${kind}requests`);
console.log(`allocated per request: ${(total / n / 1024).toFixed(1)} KB`);
for (const [key, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${(bytes / n / 1024).toFixed(2).padStart(8)} KB  ${key}`);
}
