/**
 * Every shell line of the ```sh blocks of README.md and docs/*.md, run as printed in a scratch folder, the way a user pastes it: from a
 * global install (`cursor-bridge` on PATH) and from a clone (`npm run --silent cli -- …` in the clone's folder, as the
 * README tells users to type it). A line must exit 0, leave no stray files in the folder (npm's banner evaluated by
 * `eval "$(npm run cli -- …)"` used to create `cursor-bridge@0.1.0` and `node`), and an `eval` line must set what it
 * promises. A cursor-bridge serves meanwhile (its runtime file tells `setup` where; the README's port 8765 is replaced
 * by its port). Lines that need a network, a Cursor login, an interactive client or minutes are skipped, each with
 * its reason below.
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const COMMANDS = "serve|emulator|login|logout|import|status|models|usage|doctor|setup|accounts";

/** Lines not run, and why (a line matching none of these runs). */
const SKIPPED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^npm install && npm start$/, "installs from the npm registry, then serves until stopped"],
  [/^npm start$/, "serves until stopped (test/cli/first-run-messages.test.ts starts it for real)"],
  [/\blogin\b/, "a login to Cursor (browser or OpenCode's prompt): needs the network and a person"],
  [/^npm test$/, "the whole suite: never from inside it"],
  [/^cursor-bridge import\b/, "needs the Cursor CLI or IDE logged in on this machine (test/cli/accounts.test.ts)"],
  [
    /^cursor-bridge (accounts default|status$)/,
    "needs the logins of the lines above (test/cli/accounts.test.ts runs them against the emulator)",
  ],
  [/^opencode /, "needs OpenCode logged in to Cursor (test/e2e/opencode-plugin.test.ts drives OpenCode)"],
  [/^acpx /, "an ACP session with a Cursor login (test/acp/acpx.test.ts drives acpx against the emulator)"],
  [
    /cursor_bridge_key_/,
    "reads the spend of virtual keys, which the lines that create them set up (test/gateway/prometheus-scrape.test.ts)",
  ],
  [/^claude\b/, "an interactive Claude Code session (test/e2e/claude-code.test.ts drives Claude Code)"],
  [/CURSOR_BRIDGE_STORE|CLUSTER_SECRET|--instance-url/, "needs Redis and the hosts of a team setup (test/cluster/)"],
  [/^npm run bench\b/, "a benchmark of minutes (npm run bench)"],
  [
    /^cursor-bridge emulator --port 8766\b/,
    "serves until stopped; the lines after it run against an emulator this test starts with the same key",
  ],
  [
    /\bcursor-bridge (keys|audit)\b|\/admin\/|\$ALICE_KEY/,
    "the team gateway's lines add keys to the serving bridge (after which every other line would need one) or use them (test/cli/keys.test.ts and test/gateway/serve-gateway.test.ts run these commands and calls)",
  ],
  [
    /(^|\s)cursor-bridge serve\b(?!.*--help)/,
    "serves until stopped (test/server/model-aliases.test.ts parses the alias flags and variable as serve does; " +
      "test/gateway/serve-gateway.test.ts serves with an admin key)",
  ],
];

interface Line {
  text: string;
  /** Why it is not run, or undefined. */
  skip: string | undefined;
}

/** README.md and every page of docs/, by their path from the repository's root. */
function docPages(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/** The shell lines of the ```sh blocks of README and docs/, continuations joined, comment-only lines dropped. */
function readmeLines(): Line[] {
  const lines: Line[] = [];
  const blocks = docPages().flatMap((page) => [
    ...readFileSync(join(ROOT, page), "utf8").matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g),
  ]);
  for (const block of blocks) {
    const joined = (block[1] ?? "").replace(/\\\n\s*/g, "");
    for (const raw of joined.split("\n")) {
      const text = raw.trim();
      if (text === "" || text.startsWith("#")) continue;
      const command = text.replace(/\s+#.*$/, "");
      lines.push({ text, skip: SKIPPED.find(([pattern]) => pattern.test(command))?.[1] });
    }
  }
  return lines;
}

/** What the README tells clone users to type instead of `cursor-bridge` ("`npm run … -- <command>` runs any command"). */
function cloneLauncher(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const launcher = /`(npm run [^`]*?--) <command>` runs any command from the clone/.exec(readme)?.[1];
  expect(launcher, "README no longer says how to run a command from a clone").toBeDefined();
  return launcher ?? "";
}

let bridge: RunningBridge;
/** The emulator the "Testing your own Cursor client offline" lines talk to (their port 8766 is replaced by its). */
let emulator: Emulator;
let scratch: string;
let env: Record<string, string>;
let port: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "cursor-bridge-readme-"));
  const home = join(scratch, "home");
  const bin = join(scratch, "global-bin");
  mkdirSync(bin, { recursive: true });
  // A global install: `cursor-bridge` on PATH runs this checkout's bin.
  writeFileSync(
    join(bin, "cursor-bridge"),
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "bin", "cursor-bridge.js")}" "$@"\n`,
  );
  chmodSync(join(bin, "cursor-bridge"), 0o755);
  env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
  };
  const io: CliIo = { out: () => {}, err: () => {}, isTty: false, env };
  bridge = (await startBridge(io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent"])).bridge;
  port = new URL(bridge.server.url).port;
  emulator = await startEmulator({ apiKeys: ["demo-key"] });
});
afterAll(async () => {
  await bridge?.close();
  await emulator?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A folder that is a clone as far as `npm run cli` is concerned: the package.json, and bin/ of this checkout. */
function scratchClone(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(join(ROOT, "bin"), join(dir, "bin"));
  return dir;
}

function bash(script: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (stdout += part));
    child.stderr.setEncoding("utf8").on("data", (part: string) => (stderr += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What an `eval` line must have set, printed after it runs. */
function afterwards(line: string): string {
  const names = line.includes("setup claude-code")
    ? ["ANTHROPIC_BASE_URL"]
    : line.includes("setup openai")
      ? ["OPENAI_BASE_URL"]
      : [];
  return names.map((name) => `; echo "${name}=$${name}"`).join("");
}

async function runLine(text: string, form: "global" | "clone", index: number): Promise<void> {
  const cwd = form === "clone" ? scratchClone(`clone-${index}`) : join(scratch, `global-${index}`);
  mkdirSync(cwd, { recursive: true });
  const before = readdirSync(cwd).sort();
  let line = text
    .replaceAll("127.0.0.1:8765", `127.0.0.1:${port}`)
    .replaceAll("127.0.0.1:8766", `127.0.0.1:${new URL(emulator.url).port}`);
  if (form === "clone") {
    line = line.replace(new RegExp(`(?<![\\w/.@-])cursor-bridge (?=(${COMMANDS})\\b)`, "g"), `${cloneLauncher()} `);
  }
  const result = await bash(line + afterwards(line), cwd);
  const where = `${form}: ${line}\nexit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect(result.code, where).toBe(0);
  expect(result.stderr, where).not.toMatch(/command not found|No such file/);
  expect(readdirSync(cwd).sort(), `${where}\nthe line left files behind`).toEqual(before);
  for (const match of result.stdout.matchAll(/^(ANTHROPIC_BASE_URL|OPENAI_BASE_URL)=(.*)$/gm)) {
    expect(match[2], where).toContain(`127.0.0.1:${port}`);
  }
}

describe("README and docs/ shell lines", () => {
  const lines = readmeLines();

  it("finds the lines and says why each skipped one is skipped", () => {
    expect(lines.length).toBeGreaterThan(10);
    const skipped = lines.filter((line) => line.skip !== undefined);
    console.log(
      `README and docs/: ${lines.length - skipped.length} lines run, ${skipped.length} skipped:\n` +
        skipped.map((line) => `  ${line.text}  — ${line.skip}`).join("\n"),
    );
    expect(lines.some((line) => line.text.startsWith('eval "$(cursor-bridge setup claude-code)"'))).toBe(true);
  });

  const runnable = lines.filter((line) => line.skip === undefined);
  it.each(runnable.map((line, index) => [line.text, index] as const))(
    "runs: %s",
    async (text, index) => {
      // A line written for a clone runs only there; one written for the installed command runs both ways.
      if (!text.startsWith(cloneLauncher())) await runLine(text, "global", index);
      await runLine(text, "clone", index);
    },
    120_000,
  );
});
