/**
 * The built bundle needs nothing from node_modules at run time: dist/ imports only Node's own modules (the npm
 * packages are bundled, and of js-tiktoken only the o200k_base vocabulary is kept, as dist/o200k_base.tokens). That
 * is what lets esbuild and js-tiktoken be dev dependencies and keeps `npm install --omit=dev` small. Here a copy of
 * the installed package without node_modules and without src/ (so nothing is rebuilt) serves a chat completion from
 * its embedded emulator and counts tokens.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "cursor-bridge-standalone-"));
let child: ChildProcess | undefined;
afterAll(async () => {
  // serve writes its code caches into the copy's dist/script/.cache as it exits: remove the copy after that.
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = once(child, "exit");
    child.kill();
    await exited;
  }
  rmSync(copy, { recursive: true, force: true });
});

describe("the built bundle", () => {
  it("serves, answers a chat completion and counts tokens with no node_modules at all", async () => {
    for (const part of ["dist", "bin", "package.json"]) cpSync(join(root, part), join(copy, part), { recursive: true });
    mkdirSync(join(copy, "tools"));
    for (const tool of ["build-stamp.mjs", "script-loader.mjs"])
      cpSync(join(root, "tools", tool), join(copy, "tools", tool));
    expect(existsSync(join(copy, "node_modules"))).toBe(false);
    const dependencies = Object.keys(
      (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> })
        .dependencies,
    );
    // The build's own tools are never needed to run.
    expect(dependencies).not.toContain("esbuild");
    expect(dependencies).not.toContain("js-tiktoken");

    const started = spawn(
      process.execPath,
      [join(copy, "bin", "cursor-bridge.js"), "serve", "--upstream", "emulator", "--port", "0"],
      {
        env: {
          ...process.env,
          CURSOR_BRIDGE_CONFIG_DIR: join(copy, "config"),
          CURSOR_BRIDGE_DATA_DIR: join(copy, "data"),
          CURSOR_BRIDGE_LOG_LEVEL: "warn",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = started;
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/[^\s/]+)/.exec(output);
        if (match?.[1] !== undefined) resolve(match[1]);
      };
      started.stdout?.on("data", onData);
      started.stderr?.on("data", onData);
      started.once("exit", (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
    });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "say hello" }] }),
    });
    expect(chat.status, output).toBe(200);
    const count = await fetch(`${url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-4.5-sonnet", messages: [{ role: "user", content: "Hello, world!" }] }),
    });
    expect(count.status, output).toBe(200);
    // "Hello, world!" is 4 tokens in o200k_base, plus 3 for the message.
    expect(((await count.json()) as { input_tokens: number }).input_tokens).toBe(7);
    expect(output).not.toMatch(/Cannot find (module|package)/);
  }, 120_000);
});
