/**
 * bin/cursor-bridge.js runs the bundle's script versions (dist/script/, tools/script-chunks.mjs) through
 * tools/script-loader.mjs, with a V8 code cache a server writes when it exits. In a copy of the built package: the
 * first serve writes the caches (a later one that compiled markedly more writes them again), the next one is served
 * from them (V8 accepts every one: none is written again), a corrupt, truncated or stale cache is ignored and replaced, a cache folder that cannot be written leaves the server
 * working, and `CURSOR_BRIDGE_SCRIPTS=0` runs the ES modules instead.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs tool without type declarations
import { decodeCache, encodeCache } from "../../tools/script-loader.mjs";
import { listeningOrigin } from "../support/processes.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "cursor-bridge-scripts-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));
const cacheDir = join(copy, "dist", "script", ".cache");

const decode = decodeCache as (bytes: Buffer) => Buffer | undefined;
const encode = encodeCache as (payload: Buffer) => Buffer;

/** Starts serve from the copy, waits for its API, answers a chat completion (unless not `chat`), stops it; its stderr. */
async function serveOnce(env: Record<string, string> = {}, chat = true): Promise<string> {
  const home = mkdtempSync(join(copy, "home-"));
  const child = spawn(process.execPath, [join(copy, "bin", "cursor-bridge.js"), "serve", "--port", "0"], {
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, "c"),
      XDG_DATA_HOME: join(home, "d"),
      CURSOR_BRIDGE_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const origin = await listeningOrigin(child, "serve", () => stderr);
  try {
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    if (chat) {
      const res = await fetch(`${origin}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "cached" }] }),
      });
      expect(
        ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
      ).toBe("You said: cached");
    }
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exit, stderr).toBe(0);
  return stderr;
}

function caches(): Map<string, Buffer> {
  return new Map(readdirSync(cacheDir).map((name) => [name, readFileSync(join(cacheDir, name))]));
}

describe("the code cache file", () => {
  it("reads back what was written, and nothing from a truncated, damaged or foreign file", () => {
    const payload = Buffer.from("bytecode ".repeat(100));
    const file = encode(payload);
    expect(decode(file)?.equals(payload)).toBe(true);
    expect(decode(file.subarray(0, file.length - 1))).toBeUndefined();
    const flipped = Buffer.from(file);
    flipped[file.length - 10] = (flipped[file.length - 10] ?? 0) ^ 0x40;
    expect(decode(flipped)).toBeUndefined();
    expect(decode(Buffer.concat([file, Buffer.from([0])]))).toBeUndefined();
    expect(decode(Buffer.from("not a cache at all"))).toBeUndefined();
    expect(decode(Buffer.alloc(0))).toBeUndefined();
  });
});

describe("bin/cursor-bridge.js and the script bundle", () => {
  it("serves from cached scripts, and a damaged, stale or unwritable cache only costs the compile", async () => {
    // Without src/, so nothing is rebuilt: dist/ as built, bin/ and the tools bin/ imports.
    for (const part of ["dist", "bin", "package.json"]) cpSync(join(root, part), join(copy, part), { recursive: true });
    mkdirSync(join(copy, "tools"));
    for (const tool of ["build-stamp.mjs", "script-loader.mjs"])
      cpSync(join(root, "tools", tool), join(copy, "tools", tool));
    rmSync(cacheDir, { recursive: true, force: true });

    // A first start that answers no chat: dist/main.js and the chunks it loaded, each under its script's hash.
    expect(await serveOnce({}, false)).toBe("");
    const partial = caches();
    expect(partial.size).toBeGreaterThan(5);
    for (const [name, bytes] of partial) {
      expect(name).toMatch(/^[0-9a-f]{32}\.bin$/);
      expect(decode(bytes), name).toBeDefined();
    }
    const mainHash = readFileSync(join(copy, "dist", "script", "main.js"), "utf8")
      .split("\n")[0]
      ?.split(" ")
      .at(-1);
    expect(partial.has(`${mainHash}.bin`)).toBe(true);

    // One that answers a chat compiles more of what it loaded: those caches grow, and the chat door's is new.
    expect(await serveOnce()).toBe("");
    const first = caches();
    expect(first.size).toBeGreaterThan(partial.size);
    const grown = [...partial].filter(([name, bytes]) => (first.get(name)?.length ?? 0) > bytes.length);
    expect(grown.length).toBeGreaterThan(0);

    // The next start consumes them: V8 rejected none, and it compiled nothing more, so none is written again.
    expect(await serveOnce()).toBe("");
    const second = caches();
    for (const [name, bytes] of first) expect(second.get(name)?.equals(bytes), name).toBe(true);

    // A byte flipped inside one, another cut short, a third replaced by a different script's cache.
    const [damaged, truncated, stale, other] = [...second.keys()].sort(
      (a, b) => (second.get(b)?.length ?? 0) - (second.get(a)?.length ?? 0),
    ) as [string, string, string, string];
    const flipped = Buffer.from(second.get(damaged) as Buffer);
    flipped[Math.floor(flipped.length / 2)] = (flipped[Math.floor(flipped.length / 2)] ?? 0) ^ 0xff;
    writeFileSync(join(cacheDir, damaged), flipped);
    writeFileSync(join(cacheDir, truncated), (second.get(truncated) as Buffer).subarray(0, 100));
    writeFileSync(join(cacheDir, stale), second.get(other) as Buffer);
    expect(await serveOnce()).toBe("");
    const third = caches();
    const planted = new Map([
      [damaged, flipped],
      [truncated, (second.get(truncated) as Buffer).subarray(0, 100)],
      [stale, second.get(other) as Buffer],
    ]);
    for (const [name, bytes] of planted) {
      const rewritten = third.get(name) as Buffer;
      expect(decode(rewritten), name).toBeDefined();
      expect(rewritten.equals(bytes), `${name} was replaced`).toBe(false);
    }

    // A cache folder that cannot be made (a file in its way, as a read-only install would refuse it): no cache, same
    // answers.
    rmSync(cacheDir, { recursive: true, force: true });
    writeFileSync(cacheDir, "in the way");
    expect(await serveOnce()).toBe("");
    expect(readFileSync(cacheDir, "utf8")).toBe("in the way");
    rmSync(cacheDir, { force: true });

    // The ES modules, as before the scripts: the same answers.
    expect(await serveOnce({ CURSOR_BRIDGE_SCRIPTS: "0" })).toBe("");
  }, 120_000);
});
