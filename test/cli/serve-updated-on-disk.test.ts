/**
 * dist/ changed under a running serve (an upgrade of the package, a rebuild): code loaded on first use (each door's
 * handlers, the stored responses' schema) names chunks that are gone by then. In a copy of the built package, serve
 * starts and stores a response, those chunks are removed, and every door's request (the first and the next) is
 * answered 503 `server_updated` in the door's shape, saying to restart, instead of a 500 naming the missing file (or,
 * for the stored response, instead of discarding it as unreadable); each failed load is logged once, at error level.
 * Restarted on the package as built, the stored response is still there. Both ways bin/ runs the bundle: its scripts
 * (the default) and its ES modules.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "cursor-bridge-updated-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

beforeAll(() => {
  // Without src/, so nothing is rebuilt: dist/ as built (bin/ builds it first when src/ changed), bin/ and its tools.
  const built = spawn(process.execPath, [join(root, "bin", "cursor-bridge.js"), "--version"], { stdio: "ignore" });
  return new Promise<void>((resolve, reject) => {
    built.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`cursor-bridge --version exited ${code}`));
      for (const part of ["dist", "bin", "package.json"])
        cpSync(join(root, part), join(copy, part), { recursive: true });
      mkdirSync(join(copy, "tools"));
      for (const tool of ["build-stamp.mjs", "script-loader.mjs"])
        cpSync(join(root, "tools", tool), join(copy, "tools", tool));
      resolve();
    });
  });
}, 180_000);

/** Removes the chunks whose names match `pattern` (the scripts' and the ES modules'); how many were removed. */
function removeChunks(pattern: RegExp): number {
  let removed = 0;
  for (const dir of [join(copy, "dist", "chunks"), join(copy, "dist", "script", "chunks")]) {
    for (const name of readdirSync(dir)) {
      if (!pattern.test(name)) continue;
      rmSync(join(dir, name));
      removed++;
    }
  }
  return removed;
}

/** Puts dist/ back as built (each case starts from the package as built). */
function restoreDist(): void {
  rmSync(join(copy, "dist"), { recursive: true, force: true });
  cpSync(join(root, "dist"), join(copy, "dist"), { recursive: true });
}

/** Starts serve from the copy in `home`; its origin, stderr and exit. */
async function startServe(home: string, extra: Record<string, string>) {
  const child = spawn(process.execPath, [join(copy, "bin", "cursor-bridge.js"), "serve", "--port", "0"], {
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, "c"),
      XDG_DATA_HOME: join(home, "d"),
      CURSOR_BRIDGE_LOG_LEVEL: "warn",
      NO_COLOR: "1",
      ...extra,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    const origin = await listeningOrigin(child, "serve", () => stderr);
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    return { origin, stderr: () => stderr, stop: () => child.kill("SIGTERM"), exit };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

async function post(origin: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, retry: response.headers.get("x-should-retry"), body: await response.json() };
}

const MESSAGE = "cursor-bridge was updated on disk while running; restart it.";

describe.each([
  ["its scripts", {}],
  ["its ES modules", { CURSOR_BRIDGE_SCRIPTS: "0" }],
])("serve running %s, its dist/ replaced underneath", (_name, extra: Record<string, string>) => {
  it("answers 503 in each door's shape, saying to restart, logs it once, and discards no stored data", async () => {
    restoreDist();
    const home = mkdtempSync(join(copy, "home-"));
    const serve = await startServe(home, extra);
    let id: string;
    try {
      // A stored response, written before the upgrade (the Responses door's code is loaded by then).
      const stored = await post(serve.origin, "/v1/responses", { model: "auto", input: "keep me" });
      expect(stored.status).toBe(200);
      id = (stored.body as { id: string }).id;
      // The doors' code and the stored responses' schema, all loaded on first use, are gone.
      expect(removeChunks(/^(handlers|response-schema)-.*\.js$/)).toBe(8);

      for (let attempt = 0; attempt < 2; attempt++) {
        const chat = await post(serve.origin, "/v1/chat/completions", {
          model: "auto",
          messages: [{ role: "user", content: "hi" }],
        });
        expect(chat).toEqual({
          status: 503,
          retry: "false",
          body: { error: { message: MESSAGE, type: "server_error", param: null, code: "server_updated" } },
        });
        const messages = await post(
          serve.origin,
          "/v1/messages",
          { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
          { "anthropic-version": "2023-06-01" },
        );
        // api_error, not overloaded_error: Anthropic's clients retry an overload, and only a restart helps here.
        expect(messages).toEqual({
          status: 503,
          retry: "false",
          body: { type: "error", error: { type: "api_error", message: MESSAGE } },
        });
        const read = await fetch(`${serve.origin}/v1/responses/${id}`);
        expect(read.status).toBe(503);
        expect(await read.json()).toMatchObject({ error: { message: MESSAGE, code: "server_updated" } });
      }
      // What still loaded keeps serving.
      expect((await fetch(`${serve.origin}/health`)).status).toBe(200);
      const stderr = serve.stderr();
      const lines = stderr.split("\n").filter((line) => line.includes("was updated on disk while running"));
      expect(lines, stderr).toHaveLength(3);
      for (const path of ["/v1/chat/completions", "/v1/messages", `/v1/responses/${id}`]) {
        expect(
          lines.filter((line) => line.includes(`code ${path} needs`)),
          stderr,
        ).toHaveLength(1);
      }
      for (const line of lines) expect(line).toMatch(/ERROR/);
      expect(stderr).not.toContain("unhandled error");
      expect(stderr).not.toContain("discarding");
    } finally {
      serve.stop();
    }
    expect(await serve.exit, serve.stderr()).toBe(0);

    // Restarted on the new build: the stored response is still there.
    restoreDist();
    const restarted = await startServe(home, extra);
    try {
      const read = await fetch(`${restarted.origin}/v1/responses/${id}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ id, status: "completed" });
    } finally {
      restarted.stop();
    }
    expect(await restarted.exit, restarted.stderr()).toBe(0);
  }, 120_000);
});
