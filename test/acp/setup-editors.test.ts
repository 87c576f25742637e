/**
 * `cursor-bridge setup zed|jetbrains|neovim`: the printed agent-server entries, and `--write` merging into an
 * existing file (other settings and agents kept, a backup made, a JSONC file left alone).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_NAME, agentLaunch, editorText, runEditorSetup } from "../../src/cli/setup-editors.js";
import { captureIo } from "../cli/harness.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function io(home: string) {
  const {
    io: cli,
    out,
    err,
  } = captureIo({
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    CURSOR_BRIDGE_CONFIG_DIR: join(home, "cb"),
  });
  return { cli, out, err };
}

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-setup-editors-"));
  dirs.push(dir);
  return dir;
}

describe("setup for ACP editors", () => {
  it("launches the running bin with this Node, else cursor-bridge from PATH", () => {
    const bin = new URL("../../bin/cursor-bridge.js", import.meta.url).pathname;
    expect(agentLaunch(bin, "/usr/bin/node", "gpt-5.2")).toEqual({
      command: "/usr/bin/node",
      args: [bin, "acp", "--model", "gpt-5.2"],
    });
    expect(agentLaunch("/nowhere/vitest.mjs", "/usr/bin/node", undefined)).toEqual({
      command: "cursor-bridge",
      args: ["acp"],
    });
  });

  it("prints Zed's and JetBrains' agent_servers entries and Neovim's Lua", () => {
    const launch = { command: "cursor-bridge", args: ["acp"] };
    expect(JSON.parse(editorText("zed", launch))).toEqual({
      agent_servers: { [AGENT_NAME]: { type: "custom", command: "cursor-bridge", args: ["acp"], env: {} } },
    });
    expect(JSON.parse(editorText("jetbrains", launch))).toEqual({
      agent_servers: { [AGENT_NAME]: { command: "cursor-bridge", args: ["acp"], env: {} } },
    });
    const lua = editorText("neovim", launch);
    expect(lua).toContain('acp_providers = {\n    ["cursor-bridge"] = { command = "cursor-bridge", args = { "acp" }');
    expect(lua).toContain('commands = { default = { "cursor-bridge", "acp" } }');
  });

  it("merges into Zed's settings.json, keeping the rest and a backup", async () => {
    const home = tempHome();
    const settings = join(home, "config", "zed", "settings.json");
    mkdirSync(join(home, "config", "zed"), { recursive: true });
    writeFileSync(settings, JSON.stringify({ theme: "One Dark", agent_servers: { Other: { command: "other" } } }));
    const { cli, out } = io(home);
    expect(await runEditorSetup(["zed", "--write"], cli)).toBe(0);
    const merged = JSON.parse(readFileSync(settings, "utf8"));
    expect(merged.theme).toBe("One Dark");
    expect(merged.agent_servers.Other).toEqual({ command: "other" });
    expect(merged.agent_servers[AGENT_NAME].type).toBe("custom");
    expect(readdirSync(join(home, "config", "zed")).some((name) => name.endsWith(".bak"))).toBe(true);
    expect(out.join("")).toContain(`Updated ${settings}`);
    const again = io(home);
    expect(await runEditorSetup(["zed", "--write"], again.cli)).toBe(0);
    expect(again.out.join("")).toContain("nothing changed");
  });

  it("leaves a JSONC settings file alone and prints the entry instead", async () => {
    const home = tempHome();
    const file = join(home, "acp.json");
    writeFileSync(file, '{\n  // mine\n  "agent_servers": {}\n}\n');
    const { cli, out, err } = io(home);
    expect(await runEditorSetup(["jetbrains", "--write", "--file", file], cli)).toBe(1);
    expect(readFileSync(file, "utf8")).toContain("// mine");
    expect(err.join("")).toContain("JSONC");
    expect(out.join("")).toContain(AGENT_NAME);
  });

  it("refuses --write for Neovim, whose plugins are configured in Lua", async () => {
    const { cli } = io(tempHome());
    await expect(runEditorSetup(["neovim", "--write"], cli)).rejects.toThrow(/Lua/);
  });
});
