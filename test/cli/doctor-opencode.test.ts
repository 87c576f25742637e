/**
 * `doctor` names why OpenCode cannot load the cursor-bridge plugin (OpenCode itself says only "Provider not found:
 * cursor"): a bare `cursor-bridge` entry, or a path that holds no cursor-bridge; the entry `setup opencode-plugin
 * --write` writes passes.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, createCliHarness } from "./harness.js";

let harness: CliHarness;
let file: string;

beforeAll(async () => {
  harness = await createCliHarness();
  file = join(harness.home, ".config", "opencode", "opencode.json");
  mkdirSync(join(file, ".."), { recursive: true });
});
afterAll(async () => {
  await harness?.close();
});

async function pluginCheck(): Promise<{ status: string; detail: string; fix?: string } | undefined> {
  const doctor = await harness.run(["doctor", "--json"], { env: { CURSOR_BRIDGE_PORT: "8797" } });
  const { checks } = JSON.parse(doctor.out) as { checks: Array<{ id: string; status: string; detail: string }> };
  return checks.find((check) => check.id === "opencode-plugin");
}

describe("doctor: the OpenCode plugin entry", () => {
  it("fails a bare cursor-bridge entry and a path without cursor-bridge, passes what setup writes", async () => {
    writeFileSync(file, JSON.stringify({ plugin: ["cursor-bridge"] }));
    expect(await pluginCheck()).toMatchObject({
      status: "fail",
      detail: expect.stringContaining('"cursor-bridge" is no published package'),
      fix: expect.stringContaining("setup opencode-plugin --write"),
    });

    writeFileSync(file, JSON.stringify({ plugin: ["file:///nonexistent/cursor-bridge"] }));
    expect(await pluginCheck()).toMatchObject({
      status: "fail",
      detail: expect.stringContaining("file:///nonexistent/cursor-bridge holds no cursor-bridge"),
    });

    const written = await harness.run(["setup", "opencode-plugin", "--write"], { env: { CURSOR_BRIDGE_PORT: "8797" } });
    expect(written.code, written.err).toBe(0);
    const plugins = (JSON.parse(readFileSync(file, "utf8")) as { plugin: string[] }).plugin;
    expect(plugins).toHaveLength(1);
    expect(await pluginCheck()).toMatchObject({ status: "ok", detail: expect.stringContaining(plugins[0] ?? "?") });

    writeFileSync(file, JSON.stringify({ plugin: ["some-other-plugin"] }));
    expect(await pluginCheck()).toBeUndefined();
  }, 60_000);
});
