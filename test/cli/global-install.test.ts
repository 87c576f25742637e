/**
 * From a fresh clone, as the README says: a clone with no prior `npm install`, the README's line that puts
 * `cursor-bridge` on the PATH (run as printed, into a throwaway npm prefix instead of the machine's global one), and
 * then `cursor-bridge --version` from that PATH. It installs the package's dependencies from the npm registry (npm's
 * cache first), as a user's first install does.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "cursor-bridge-clone-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function sh(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (output += part));
    child.stderr.setEncoding("utf8").on("data", (part: string) => (output += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), 480_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("a fresh clone, as the README documents it", () => {
  it("puts cursor-bridge on the PATH with the README's line, and `cursor-bridge --version` runs", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const line = /put it on your PATH once with `([^`]+)`/.exec(readme)?.[1];
    expect(line, "the README no longer says how to put cursor-bridge on the PATH").toBeDefined();
    const clone = join(scratch, "clone");
    const cloned = spawnSync("git", ["clone", "--quiet", ROOT, clone], { encoding: "utf8" });
    expect(cloned.status, cloned.stderr).toBe(0);
    const prefix = join(scratch, "prefix");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // npm's global folder for this test only; everything else (cache, registry) as the user has it.
      npm_config_prefix: prefix,
      npm_config_prefer_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      PATH: `${join(prefix, "bin")}:${process.env.PATH ?? ""}`,
    };
    // `npm install -g .` links the clone without installing its dependencies: it either works or names the line.
    const linked = await sh("npm install -g .", clone, env);
    if (linked.code !== 0) expect(linked.output).toContain(line);
    const installed = await sh(line ?? "", clone, env);
    expect(installed.code, installed.output).toBe(0);
    const version = await sh("cursor-bridge --version", scratch, env);
    const expected = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
    expect(version.code, version.output).toBe(0);
    expect(version.output.trim()).toContain(expected);
  }, 600_000);
});
