/**
 * One timed start of a command for the cold-start scenario (bench/startup.ts): spawned in a throwaway HOME, in its own
 * process group (so stopping it also stops the node that npm starts), timed from the spawn to its listening line, its
 * first 200 on the health path and, for serve, its first completed chat request; then stopped.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** One start's times (ms from spawn); undefined when that point does not apply. */
export interface StartTimes {
  lineMs: number;
  healthMs: number | undefined;
  chatMs: number | undefined;
}

/** A kind of start. */
export interface Kind {
  key: string;
  label: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Wait for the listening line (else: for the exit). */
  listens: boolean;
  /** Path asked for the first 200 (`/health` for serve, `/` for the bare listener). */
  healthPath?: string;
  chat?: boolean;
}

/** The status of `method url` over a fresh connection (0 when the connection failed). */
function send(url: string, method = "GET", body?: string): Promise<number> {
  return new Promise((resolve) => {
    const headers = body === undefined ? {} : { "content-type": "application/json" };
    const req = request(url, { method, agent: false, timeout: 30_000, headers }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(0));
    req.end(body);
  });
}

async function first200(url: string): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    if ((await send(url)) === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${url} did not answer 200 within 30 s`);
}

const CHAT = JSON.stringify({ model: "auto", messages: [{ role: "user", content: "first request" }] });

/** Starts `kind` once and stops it (its whole process group: npm's node too). */
export function startOnce(kind: Kind): Promise<StartTimes> {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-startup-"));
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, "c"),
    XDG_DATA_HOME: join(home, "d"),
    CURSOR_BRIDGE_LOG_LEVEL: "warn",
    ...kind.env,
  };
  const started = performance.now();
  const child = spawn(kind.command, kind.args, {
    cwd: kind.cwd ?? ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr.on("data", (part: Buffer) => (stderr += part.toString()));
  const stop = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  };
  return new Promise<StartTimes>((resolve, reject) => {
    let out = "";
    const times: StartTimes = { lineMs: Number.NaN, healthMs: undefined, chatMs: undefined };
    let failure: unknown;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, 60_000);
    child.stdout.on("data", (part: Buffer) => {
      out += part.toString();
      if (!kind.listens || !Number.isNaN(times.lineMs)) return;
      const base = /listening on (http:\/\/\S+?)\/v1/.exec(out)?.[1];
      if (base === undefined) return;
      times.lineMs = performance.now() - started;
      void (async () => {
        if (kind.healthPath !== undefined) {
          await first200(`${base}${kind.healthPath}`);
          times.healthMs = performance.now() - started;
        }
        if (kind.chat) {
          const status = await send(`${base}/v1/chat/completions`, "POST", CHAT);
          if (status !== 200) throw new Error(`the first chat request answered ${status}`);
          times.chatMs = performance.now() - started;
        }
      })()
        .catch((error: unknown) => (failure = error))
        .finally(stop);
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      if (failure !== undefined) reject(failure);
      else if (timedOut) reject(new Error(`${kind.label} did not finish within 60 s:\n${stderr}`));
      else if (!kind.listens && code === 0) resolve({ ...times, lineMs: performance.now() - started });
      else if (!Number.isNaN(times.lineMs)) resolve(times);
      else reject(new Error(`${kind.label} exited (${code}) before listening:\n${stderr}`));
    });
  });
}

/** A throwaway package whose `npm start` runs a bare HTTP listener printing a line like the bridge's. */
export function bareListenerPackage(): string {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-bare-listener-"));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "bare-listener", private: true, type: "module", scripts: { start: "node listener.mjs" } }),
  );
  writeFileSync(
    join(dir, "listener.mjs"),
    'import { createServer } from "node:http";\n' +
      'const server = createServer((_, res) => res.end("ok"));\n' +
      'server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port + "/v1"));\n',
  );
  // The floor of the framework serve is built on: a Hono app on @hono/node-server (which loads Node's fetch classes,
  // Request and Response), bundled into one file as dist/ is.
  buildSync({
    stdin: {
      contents:
        'import { serve } from "@hono/node-server";\nimport { Hono } from "hono";\n' +
        'const app = new Hono().get("/", (c) => c.text("ok"));\n' +
        'serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => console.log("listening on http://127.0.0.1:" + info.port + "/v1"));\n',
      resolveDir: ROOT,
      loader: "js",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: join(dir, "hono-listener.mjs"),
    logLevel: "error",
  });
  return dir;
}
