/**
 * bin/cursor-bridge.js holds the young generation small while a server starts by setting a V8 flag, and while any V8
 * flag differs from its default, V8 rejects the code cache Node compiles its own modules from. So bin/ loads the
 * Node modules a server's start needs before it sets the flag (SERVER_BUILTINS): these tests start `serve` and
 * `emulator` as users do, with a preload that records which of Node's modules load between the flag's hold and its
 * release, and expect none (a module the start begins to use is added to the list).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-held-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A preload wrapping v8.setFlagsFromString: writes, per flag set, the Node modules loaded until the next one. */
const PRELOAD = `
const { writeFileSync } = require("node:fs");
const v8 = require("node:v8");
const original = v8.setFlagsFromString;
const marks = [];
v8.setFlagsFromString = (flags) => {
  marks.push({ flags, from: process.moduleLoadList.length });
  return original(flags);
};
process.on("exit", () => {
  const list = process.moduleLoadList;
  const spans = marks.map((mark, i) => ({
    flags: mark.flags,
    loaded: list
      .slice(mark.from, marks[i + 1]?.from ?? list.length)
      .filter((entry) => entry.startsWith("NativeModule "))
      .map((entry) => entry.slice("NativeModule ".length)),
  }));
  writeFileSync(process.env.HELD_REPORT, JSON.stringify(spans));
});
`;
const preload = join(dir, "held-preload.cjs");
writeFileSync(preload, PRELOAD);

interface Span {
  flags: string;
  loaded: string[];
}

/** Starts `args` through bin/ with the preload, runs `use` on its origin once it listens, stops it; the spans. */
async function spans(name: string, args: string[], use: (origin: string) => Promise<void>): Promise<Span[]> {
  const home = mkdtempSync(join(dir, `${name}-`));
  const report = join(dir, `${name}.json`);
  const child = spawn(process.execPath, ["--require", preload, BIN, ...args], {
    env: {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, "c"),
      XDG_DATA_HOME: join(home, "d"),
      HELD_REPORT: report,
      NODE_OPTIONS: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const origin = await listeningOrigin(child, name);
  try {
    await use(origin);
  } finally {
    child.kill("SIGTERM");
  }
  expect(await exit).toBe(0);
  return JSON.parse(readFileSync(report, "utf8")) as Span[];
}

/** Node modules loaded while the young generation was held (between the hold and the next flag set). */
function loadedWhileHeld(result: Span[]): string[] {
  const held = result.findIndex((span) => span.flags === "--semi-space-growth-factor=1");
  expect(held, "bin/ holds the young generation").toBeGreaterThanOrEqual(0);
  expect(result[held + 1]?.flags, "the server releases it").toBe("--semi-space-growth-factor=2");
  return result[held]?.loaded ?? [];
}

describe("Node's modules and the held young generation", () => {
  it("serve loads none of Node's modules while the young generation is held, up to its first chat answer", async () => {
    const result = await spans("serve", ["serve", "--port", "0", "--log-level", "warn"], async (origin) => {
      const res = await fetch(`${origin}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "held" }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    });
    expect(loadedWhileHeld(result)).toEqual([]);
  }, 60_000);

  it("the emulator loads none of them while it is held", async () => {
    const result = await spans("emulator", ["emulator", "--port", "0"], async (origin) => {
      expect((await fetch(`${origin}/auth/poll?uuid=x&verifier=y`)).status).toBe(404);
    });
    expect(loadedWhileHeld(result)).toEqual([]);
  }, 60_000);
});
