/**
 * dist/ changed under a running serve (an upgrade of the package, a rebuild): each door's code loads on its first
 * request, and the chunk the running code names is gone by then. In a copy of the built package, serve starts, the
 * doors' chunks are removed, and every door's first request (and the next) is answered 503 `server_updated` in the
 * door's shape, saying to restart, instead of a 500 naming the missing file; the failure is logged once per door, at
 * error level. Both ways bin/ runs the bundle: its scripts (the default) and its ES modules.
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

/** Removes every door's handlers chunk (the scripts' and the ES modules'); how many were removed. */
function removeDoorChunks(): number {
  let removed = 0;
  for (const dir of [join(copy, "dist", "chunks"), join(copy, "dist", "script", "chunks")]) {
    for (const name of readdirSync(dir)) {
      if (!/^handlers-.*\.js$/.test(name)) continue;
      rmSync(join(dir, name));
      removed++;
    }
  }
  return removed;
}

/** Restores the chunks removed by {@link removeDoorChunks} (the next case starts from the package as built). */
function restoreDist(): void {
  rmSync(join(copy, "dist"), { recursive: true, force: true });
  cpSync(join(root, "dist"), join(copy, "dist"), { recursive: true });
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
  it("answers each door's requests 503 in the door's shape, saying to restart, and logs it once", async () => {
    restoreDist();
    const home = mkdtempSync(join(copy, "home-"));
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
      expect(removeDoorChunks()).toBe(6);

      for (let attempt = 0; attempt < 2; attempt++) {
        const chat = await post(origin, "/v1/chat/completions", {
          model: "auto",
          messages: [{ role: "user", content: "hi" }],
        });
        expect(chat).toEqual({
          status: 503,
          retry: "false",
          body: { error: { message: MESSAGE, type: "server_error", param: null, code: "server_updated" } },
        });
        const messages = await post(
          origin,
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
        const responses = await post(origin, "/v1/responses", { model: "auto", input: "hi" });
        expect(responses.status).toBe(503);
        expect(responses.body).toMatchObject({ error: { message: MESSAGE, code: "server_updated" } });
      }
      // What still loaded keeps serving.
      expect((await fetch(`${origin}/health`)).status).toBe(200);
      for (const door of ["/v1/chat/completions", "/v1/messages", "/v1/responses"]) {
        const lines = stderr.split("\n").filter((line) => line.includes(`the code of ${door} could not be loaded`));
        expect(lines, stderr).toHaveLength(1);
        expect(lines[0]).toMatch(/ERROR/);
      }
      expect(stderr).not.toContain("unhandled error");
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exit, stderr).toBe(0);
  }, 120_000);
});
