#!/usr/bin/env node
/**
 * Cold start of `serve` as users run it, to the first `/health` 200 (the API serves): medians (and min–max) of N
 * interleaved runs, each in a throwaway HOME, with the embedded emulator (not logged in) and logged in
 * (CURSOR_ACCESS_TOKEN; answering /health needs no network), through `node bin/cursor-bridge.js serve` and through
 * `npm start`, beside the floors: `node -e 0`, and a bare node:http listener started with `node` and with `npm start`.
 * The load average is printed beside the numbers: on a shared machine, compare runs taken under similar load.
 *
 * `--cpu` also reports the CPU time (all threads) the server had used when it answered its first /health 200, read
 * in the server by a preload (`--import`, through NODE_OPTIONS) that adds a millisecond or two to each start; CPU
 * time moves much less than wall time when other processes compete for the cores.
 *
 * Usage: `node tools/measure-startup.mjs [runs=7] [--only=floors,bin-emulator,bin-cursor,npm-emulator,npm-cursor]
 *   [--cpu] [--bin=path/to/cursor-bridge.js] [--node-args="--v8-flag …"]` (`--bin`: another checkout's, e.g. a
 *   baseline; `--node-args`: node options for the `node bin/…` cases). A first, unmeasured start rebuilds a stale dist/.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const option = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 7);
const only = option("only")?.split(",");
const bin = option("bin") ?? join(root, "bin", "cursor-bridge.js");
const nodeArgs = (option("node-args") ?? "").split(" ").filter(Boolean);
const cpu = process.argv.includes("--cpu");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
const accessToken = `${b64({ alg: "none" })}.${b64({ sub: "auth0|user_1", email: "a@example.com", exp: 4e9 })}.x`;
const MARK = "@@cursor-bridge-startup cpu_ms=";

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function statusOf(url) {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(0));
    req.end();
  });
}

async function firstHealthy(base) {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    if ((await statusOf(`${base}/health`)) === 200) return performance.now();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`${base}/health did not answer 200 within 30 s`);
}

/**
 * Spawn → the line matching `until` and, with `ready`, → the first /health 200 (then the process group is stopped);
 * without `until`, spawn → exit.
 */
function timeOne(command, args, { until, ready = false, cwd = root, env = {} }) {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-start-"));
  const childEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d") };
  const started = performance.now();
  const child = spawn(command, args, {
    cwd,
    env: { ...childEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (part) => {
    err += part;
  });
  const stop = () => {
    if (child.exitCode === null) process.kill(-child.pid, "SIGTERM");
  };
  return new Promise((resolve, reject) => {
    let lineMs;
    let readyMs;
    let failure;
    child.stdout.on("data", (part) => {
      out += part;
      if (lineMs !== undefined || !until?.test(out)) return;
      lineMs = performance.now() - started;
      if (!ready) return stop();
      firstHealthy(out.match(/listening on (http:\/\/\S+?)\/v1/)?.[1])
        .then((at) => {
          readyMs = at - started;
        })
        .catch((error) => {
          failure = error;
        })
        .finally(stop);
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      rmSync(home, { recursive: true, force: true });
      const mark = err.indexOf(MARK);
      const cpuMs = mark === -1 ? undefined : Number.parseFloat(err.slice(mark + MARK.length));
      if (failure !== undefined) reject(failure);
      else if (until === undefined) resolve({ lineMs: performance.now() - started });
      else if (lineMs !== undefined && (!ready || readyMs !== undefined)) resolve({ lineMs, readyMs, cpuMs });
      else reject(new Error(`${command} ${args.join(" ")} exited (${code}):\n${out}\n${err}`));
    });
  });
}

const scratch = mkdtempSync(join(tmpdir(), "cursor-bridge-start-tools-"));
writeFileSync(
  join(scratch, "package.json"),
  JSON.stringify({ name: "bare", private: true, type: "module", scripts: { start: "node listener.mjs" } }),
);
writeFileSync(
  join(scratch, "listener.mjs"),
  'import { createServer } from "node:http";\nconst server = createServer((_, res) => res.end("ok"));\n' +
    'server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port + "/v1"));\n',
);
// The preload of --cpu: prints the CPU time used when the first /health 200 is sent.
writeFileSync(
  join(scratch, "mark.mjs"),
  'import { writeSync } from "node:fs";\nimport { ServerResponse } from "node:http";\n' +
    "const end = ServerResponse.prototype.end;\nlet marked = false;\n" +
    "ServerResponse.prototype.end = function (...args) {\n" +
    '  if (!marked && this.req?.url === "/health" && this.statusCode === 200) {\n' +
    "    marked = true;\n    const { user, system } = process.cpuUsage();\n" +
    `    writeSync(2, \`${MARK}\${(user + system) / 1000}\\n\`);\n  }\n  return end.apply(this, args);\n};\n`,
);
const markEnv = cpu ? { NODE_OPTIONS: `--import ${pathToFileURL(join(scratch, "mark.mjs")).href}` } : {};
const listening = /listening on /;
const serveArgs = ["serve", "--port", "0", "--emulator-port", "0"];
const loggedIn = { CURSOR_ACCESS_TOKEN: accessToken, CURSOR_AGENT_URL: "http://127.0.0.1:9" };
const serve = (env) =>
  timeOne(process.execPath, [...nodeArgs, bin, ...serveArgs], { until: listening, ready: true, env });
const npmStart = (env) =>
  timeOne(npm, ["start", "--silent", "--", ...serveArgs.slice(1)], { until: listening, ready: true, env });
const cases = {
  "node -e 0": () => timeOne(process.execPath, ["-e", "0"], {}),
  "bare node:http, node": () => timeOne(process.execPath, ["listener.mjs"], { until: listening, cwd: scratch }),
  "bare node:http, npm start": () => timeOne(npm, ["start", "--silent"], { until: listening, cwd: scratch }),
  "serve, emulator": () => serve(markEnv),
  "serve, logged in": () => serve({ ...markEnv, ...loggedIn }),
  "npm start, emulator": () => npmStart(markEnv),
  "npm start, logged in": () => npmStart({ ...markEnv, ...loggedIn }),
};
const groups = {
  floors: ["node -e 0", "bare node:http, node", "bare node:http, npm start"],
  "bin-emulator": ["serve, emulator"],
  "bin-cursor": ["serve, logged in"],
  "npm-emulator": ["npm start, emulator"],
  "npm-cursor": ["npm start, logged in"],
};
const names = (only ?? Object.keys(groups)).flatMap((group) => groups[group] ?? []);
const spread = (values) =>
  `${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
try {
  const before = loadavg();
  await cases["serve, emulator"]();
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  // Interleaved, so a change of load hits every case alike.
  for (let i = 0; i < runs; i++) for (const name of names) samples[name].push(await cases[name]());
  const load = (values) => values.map((value) => value.toFixed(2)).join(" ");
  console.log(`${runs} runs each, medians (min–max); load average before ${load(before)}, after ${load(loadavg())}`);
  for (const name of names) {
    const line = samples[name].map((sample) => sample.lineMs);
    const ready = samples[name].flatMap((sample) => (sample.readyMs === undefined ? [] : [sample.readyMs]));
    const cpuMs = samples[name].flatMap((sample) => (sample.cpuMs === undefined ? [] : [sample.cpuMs]));
    const what = name.startsWith("node -e") ? "exit" : "listening line";
    console.log(
      `${name.padEnd(26)} ${what} ${spread(line)}` +
        (ready.length > 0 ? ` · first /health 200 ${spread(ready)}` : "") +
        (cpuMs.length > 0 ? ` · CPU by then ${spread(cpuMs)}` : ""),
    );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
