#!/usr/bin/env node
/**
 * Memory per parked conversation of `serve` as users run it (file store, logged in to a Cursor that is the emulator
 * in a process of its own, so only the bridge's memory is read): the bridge's raw RSS growth, as a user sees it (no
 * forced collection), while N streamed chat requests with tools each park on a tool call, divided by N, and the
 * bridge's CPU per parked request. Each count runs in a fresh server, measured from a baseline read after 50 warm-up
 * turns (answered, so they end) and a settle time.
 * Usage: `node tools/measure-parked.mjs [--counts=200,1000] [--runs=3] [--settle-ms=200] [--bin=path/to/bin.js]
 *   [--node-args="--flag …"] [--heap-snapshot=dir]` (`--settle-ms`: wait after the warm-up and after parking before
 *   reading RSS; the server's own release of memory after load runs 3 s after the last request. `--heap-snapshot`:
 *   the bridge writes a heap snapshot into dir before and after parking, to diff what each parked turn keeps).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const option = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const counts = (option("counts") ?? "200,1000").split(",").map(Number);
const runs = Number(option("runs") ?? 3);
const bin = option("bin") ?? join(root, "bin", "cursor-bridge.js");
const nodeArgs = (option("node-args") ?? "").split(" ").filter(Boolean);
/** How long after the last request parked RSS is read (the server's idle memory release runs 3 s after load). */
const settleMs = Number(option("settle-ms") ?? 200);
const API_KEY = "cur_parked_memory_probe";

const str = (description) => ({ type: "string", description });
const TOOLS = [
  ["read", "Reads a file from the local filesystem.", { filePath: str("Absolute path"), offset: str("Line") }],
  ["bash", "Executes a shell command.", { command: str("Command"), description: str("What it does") }],
  ["grep", "Searches file contents with regular expressions.", { pattern: str("Regex"), path: str("Directory") }],
  [
    "edit",
    "Performs exact string replacements.",
    { filePath: str("Path"), oldString: str("Old"), newString: str("New") },
  ],
].map(([name, description, properties]) => ({
  type: "function",
  function: {
    name,
    description,
    parameters: { type: "object", properties, required: Object.keys(properties).slice(0, 1) },
  },
}));

/** Starts `args` and resolves to the child and the first URL its stdout names (`listening on`/`Emulator listening`). */
function start(args, env, pattern) {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (part) => {
    err += part;
  });
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (part) => {
      out += part;
      const url = out.match(pattern)?.[1];
      if (url !== undefined) resolve({ child, url });
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited (${code}):\n${out}\n${err}`)));
  });
}

/** CPU time (ms, user + system) the process has used, from /proc (clock ticks of 10 ms). */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const rssOf = (pid) => Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)[1]) * 1024;

async function chat(base, messages) {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "auto", stream: true, messages, tools: TOOLS }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`status ${response.status}: ${text}`);
  return text;
}

/** Parks conversation `i` on a tool call; resolves to the messages to answer it with. */
async function park(base, i) {
  const user = { role: "user", content: `Check file ${i} [[emu:tool read {"filePath":"/repo/file-${i}.ts"}]]` };
  const text = await chat(base, [user]);
  const id = text.match(/"id":"(call[^"]+)"/)?.[1];
  if (!text.includes('"finish_reason":"tool_calls"') || id === undefined) throw new Error(`did not park: ${text}`);
  const call = {
    id,
    type: "function",
    function: { name: "read", arguments: JSON.stringify({ filePath: `/repo/file-${i}.ts` }) },
  };
  return [
    user,
    { role: "assistant", content: null, tool_calls: [call] },
    { role: "tool", tool_call_id: id, content: "ok" },
  ];
}

async function inBatches(count, width, task) {
  const results = [];
  for (let first = 0; first < count; first += width) {
    results.push(
      ...(await Promise.all(Array.from({ length: Math.min(width, count - first) }, (_, j) => task(first + j)))),
    );
  }
  return results;
}

async function once(count) {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-parked-"));
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d") };
  const emulator = await start(
    [bin, "emulator", "--port", "0", "--api-key", API_KEY],
    env,
    /(http:\/\/127\.0\.0\.1:\d+)/,
  );
  let bridge;
  try {
    const upstream = { CURSOR_API_KEY: API_KEY, CURSOR_API_URL: emulator.url, CURSOR_AGENT_URL: emulator.url };
    const snapshotArgs =
      option("heap-snapshot") === undefined
        ? []
        : ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${option("heap-snapshot")}`];
    bridge = await start(
      [...nodeArgs, ...snapshotArgs, bin, "serve", "--port", "0", "--log-level", "warn"],
      { ...env, ...upstream },
      /listening on (http:\/\/\S+?)\/v1/,
    );
    // Warm-up: first-use allocations are not charged to the measured conversations; then answered, so they end.
    const warm = await inBatches(50, 25, (i) => park(bridge.url, -1 - i));
    await inBatches(warm.length, 25, (i) => chat(bridge.url, warm[i]));
    await new Promise((resolve) => setTimeout(resolve, Math.max(500, settleMs)));
    const snapshotDir = option("heap-snapshot");
    const snapshot = async () => {
      if (snapshotDir === undefined) return;
      bridge.child.kill("SIGUSR2");
      await new Promise((resolve) => setTimeout(resolve, 15_000));
    };
    await snapshot();
    const before = rssOf(bridge.child.pid);
    const cpuBefore = cpuOf(bridge.child.pid);
    await inBatches(count, 50, (i) => park(bridge.url, i));
    const cpuMs = cpuOf(bridge.child.pid) - cpuBefore;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const after = rssOf(bridge.child.pid);
    await snapshot();
    return { bytes: (after - before) / count, cpuMs: cpuMs / count };
  } finally {
    bridge?.child.kill("SIGTERM");
    emulator.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    rmSync(home, { recursive: true, force: true });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const before = loadavg();
const results = Object.fromEntries(counts.map((count) => [count, []]));
for (let i = 0; i < runs; i++) for (const count of counts) results[count].push(await once(count));
const load = (values) => values.map((value) => value.toFixed(2)).join(" ");
console.log(`${runs} runs each; load average before ${load(before)}, after ${load(loadavg())}`);
for (const count of counts) {
  const kb = results[count].map((result) => result.bytes / 1024);
  const cpu = results[count].map((result) => result.cpuMs);
  console.log(
    `${String(count).padStart(5)} parked: raw RSS growth ${median(kb).toFixed(1)} KB per conversation (${kb.map((v) => v.toFixed(1)).join(", ")})` +
      ` · bridge CPU ${median(cpu).toFixed(2)} ms per parked request (${cpu.map((v) => v.toFixed(2)).join(", ")})`,
  );
}
