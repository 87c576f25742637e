/**
 * bin/cursor-bridge.js runs the compiled dist/, never a stale one: in a copy of the package (src/, bin/, the tools/
 * files package.json ships, package.json, node_modules linked), the first start builds dist/ and says so, the next start runs it silently, and
 * after a source changes the start rebuilds first and runs the changed code.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "cursor-bridge-build-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

function run(args: string[], at = copy) {
  const home = join(copy, "home");
  return spawnSync(process.execPath, [join(at, "bin", "cursor-bridge.js"), ...args], {
    encoding: "utf8",
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d") },
  });
}

describe("bin/cursor-bridge.js and dist/", () => {
  it("builds dist/ on first start, runs it as is while current, and rebuilds it when src/ changes", () => {
    for (const part of ["src", "bin", "package.json"]) cpSync(join(root, part), join(copy, part), { recursive: true });
    mkdirSync(join(copy, "tools"));
    // The build tools the package ships (package.json `files`), so a tool the build needs but the package lacks fails.
    const files = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] }).files;
    for (const tool of files.filter((file) => file.startsWith("tools/"))) cpSync(join(root, tool), join(copy, tool));
    symlinkSync(join(root, "node_modules"), join(copy, "node_modules"), "dir");

    const first = run(["--version"]);
    expect(first.stderr).toMatch(/dist\/ has not been built; building it .* done in \d+ ms/s);
    expect(first.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(first.status).toBe(0);

    // What keeps the bundle's memory and start down (tools/build.mjs): one-byte sources, zod's English messages only,
    // no OpenTelemetry API (prom-client's import of it is the no-SDK answer of a few lines), and protobuf-es's field
    // lookup by number built once per message type, not once per decoded message.
    const scripts = readdirSync(join(copy, "dist"), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".js"),
    );
    let stubs = 0;
    for (const script of scripts) {
      const text = readFileSync(join(copy, "dist", script), "utf8");
      expect(text, script).not.toMatch(/[\u0100-\uffff]/);
      expect(text, script).not.toMatch(/zod\/v4\/locales\/(?!en\.js)/);
      expect(text, script).not.toContain("node_modules/@opentelemetry/");
      if (text.includes("no-opentelemetry-sdk:@opentelemetry/api")) stubs++;
    }
    // Once in the ES modules, once in their script versions (dist/script/, tools/script-chunks.mjs).
    expect(stubs).toBe(2);

    const second = run(["--help"]);
    expect(second.stderr).toBe("");
    expect(second.stdout).toMatch(/serve\s+Run the OpenAI-compatible server/);

    // A source edit after the build must show up in the next start, never the old output.
    const mainTs = join(copy, "src", "cli", "main.ts");
    writeFileSync(mainTs, readFileSync(mainTs, "utf8").replace("Show help", "Show the freshly built help"));
    const third = run(["--help"]);
    expect(third.stderr).toMatch(/src\/ changed since dist\/ was built; building it .* done/s);
    expect(third.stdout).toContain("Show the freshly built help");
    expect(run(["--help"]).stderr).toBe("");

    // Rewritten in place deep under src/ (its folder's mtime does not change): still a rebuild.
    const deep = join(copy, "src", "gen", "agent", "v1", "agent_pb.ts");
    writeFileSync(deep, readFileSync(deep, "utf8"));
    expect(run(["--version"]).stderr).toMatch(/src\/ changed since dist\/ was built; building it .* done/s);
    // A test file is not part of dist/: no rebuild for it.
    const testFile = join(copy, "src", "cli", "args.test.ts");
    writeFileSync(testFile, readFileSync(testFile, "utf8"));
    expect(run(["--version"]).stderr).toBe("");
  });

  it("runs an installed package's dist/ as shipped, without comparing it with src/", () => {
    // As npm installs it (globally, by npx or as a dependency): in a node_modules folder, with src/ beside dist/.
    // copy/node_modules is a link to the checkout's own: the package is removed again below, whatever happens.
    const installed = join(copy, "node_modules", "cursor-bridge");
    try {
      installAndStart(installed);
    } finally {
      rmSync(installed, { recursive: true, force: true });
    }
  });

  function installAndStart(installed: string): void {
    const files = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] }).files;
    for (const part of files.filter((file) => existsSync(join(root, file)))) {
      cpSync(join(root, part), join(installed, part), { recursive: true });
    }
    cpSync(join(root, "package.json"), join(installed, "package.json"));
    expect(existsSync(join(installed, "dist", ".build-stamp")), "dist/ must be built (npm run build)").toBe(true);
    // A source newer than the build: a clone would rebuild here; the installed package does not look.
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(join(installed, "src", "cli", "main.ts"), future, future);
    const started = run(["--version"], installed);
    expect(started.stderr).toBe("");
    expect(started.status).toBe(0);
    expect(started.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  }

  it("a user who cannot write the clone gets a clear message, never a stack: the previous build runs, or exit 1", () => {
    expect(existsSync(join(copy, "dist", ".build-stamp")), "the first test builds the copy").toBe(true);
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(join(copy, "src", "cli", "main.ts"), future, future);
    // Root writes anywhere: run as nobody then; anyone else is kept out by the mode bits.
    const asRoot = process.getuid?.() === 0;
    chmodSync(copy, asRoot ? 0o755 : 0o555);
    const asOther = (args: string[]) =>
      asRoot
        ? spawnSync(
            "setpriv",
            [
              "--reuid=65534",
              "--regid=65534",
              "--clear-groups",
              process.execPath,
              join(copy, "bin", "cursor-bridge.js"),
              ...args,
            ],
            { encoding: "utf8", env: { ...process.env, HOME: tmpdir() } },
          )
        : run(args);
    try {
      const stale = asOther(["--version"]);
      expect(stale.error).toBeUndefined();
      expect(stale.stderr).toContain(
        "cursor-bridge: warning: src/ changed since dist/ was built, but this user cannot rebuild it",
      );
      expect(stale.stderr).toContain(`running the previous build. Run \`npm run build\` in ${copy} as its owner.`);
      expect(stale.stderr).not.toMatch(/\n\s+at /);
      expect(stale.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
      expect(stale.status).toBe(0);

      chmodSync(copy, 0o755);
      renameSync(join(copy, "dist"), join(copy, "dist-aside"));
      if (!asRoot) chmodSync(copy, 0o555);
      const none = asOther(["--version"]);
      expect(none.stderr).toContain("cursor-bridge: dist/ has not been built, and this user cannot build it (EACCES");
      expect(none.stderr).toContain(`Run \`npm run build\` in ${copy} as its owner.`);
      expect(none.stderr).not.toMatch(/\n\s+at /);
      expect(none.stdout).toBe("");
      expect(none.status).toBe(1);
    } finally {
      chmodSync(copy, 0o755);
      if (existsSync(join(copy, "dist-aside"))) renameSync(join(copy, "dist-aside"), join(copy, "dist"));
    }
  });
});
