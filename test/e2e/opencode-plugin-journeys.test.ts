/**
 * Journeys of an OpenCode user with the cursor-bridge plugin (OpenCode 1.18.33 from test/clients, the plugin entry
 * `setup opencode-plugin --write` writes, an API-key credential, a standalone emulator as Cursor): a multi-step tool
 * task, a session whose model variant changes between prompts, and a run stopped in the middle of a streamed answer
 * with tool calls, then continued. The plugin starts its own bridge child for every OpenCode process, so a continued
 * session reaches a new bridge, which continues from the conversation it stored. Needs the npm registry (OpenCode
 * installs `@opencode-ai/plugin` before it loads a plugin; plugin-env.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "./support/client-process.js";
import {
  expectAnswered,
  OPENCODE_PERMISSION,
  OPENCODE_TIMEOUT_MS,
  type OpenCodeRun,
  openCodeRunArgs,
  openCodeSettings,
  runOpenCode,
  startOpenCode,
  openCodeText as texts,
  toolUses,
} from "./support/opencode.js";
import { pluginEnv, pluginSkipReason, setupPlugin, useStandaloneEmulator } from "./support/plugin-env.js";

const API_KEY = `e2e-key-${randomBytes(6).toString("hex")}`;
const MAIN_MODEL = "composer-1";
const VARIANT_MODEL = "gpt-5.5";
const TITLE_MODEL = "claude-4.5-sonnet";
const TEST_TIMEOUT_MS = 3 * OPENCODE_TIMEOUT_MS;

const reason = await pluginSkipReason();
if (reason !== undefined) console.log(`skipping the OpenCode plugin journey tests: ${reason}`);

describe.skipIf(reason !== undefined)("OpenCode plugin journeys → standalone emulator", () => {
  const emulator = useStandaloneEmulator(API_KEY, "opencode-plugin-journeys");
  let env: Record<string, string>;

  beforeAll(async () => {
    const setup = await setupPlugin(emulator.home);
    expect(setup.code, setup.stderr).toBe(0);
    const settings = openCodeSettings(`cursor/${MAIN_MODEL}`, `cursor/${TITLE_MODEL}`, {
      permission: OPENCODE_PERMISSION,
    });
    env = pluginEnv(emulator.home, emulator.url, API_KEY, settings);
  }, 60_000);

  const args = (model: string, words: string[]) => openCodeRunArgs(`cursor/${model}`, words);
  const openCode = (cwd: string, model: string, words: string[]): Promise<OpenCodeRun> =>
    runOpenCode(args(model, words), { cwd, env });
  /** The emulator's turns of `model` started since `since` (a count of all turns taken before). */
  const turnsSince = async (since: number, model: string) =>
    (await emulator.stats()).turns.slice(since).filter((turn) => turn.model === model);
  const turnCount = async () => (await emulator.stats()).turns.length;
  const until = (check: () => Promise<boolean>, what: string) =>
    waitFor(check, what, { timeoutMs: OPENCODE_TIMEOUT_MS, intervalMs: 200 });

  it(
    "a multi-step tool task: two commands at once, then a read, on one Run",
    async () => {
      const nonce = randomBytes(5).toString("hex");
      const cwd = emulator.home.folder("multi-step");
      const before = await turnCount();
      const bash = (command: string) => `[[emu:tool bash ${JSON.stringify({ command, description: "Run it" })}]]`;
      const prompt = [
        "Write and check the notes.",
        bash(`echo alpha-${nonce} > a.txt`),
        bash(`echo bravo-${nonce} > b.txt`),
        "[[emu:then]]",
        `[[emu:tool read ${JSON.stringify({ filePath: join(cwd, "b.txt") })}]]`,
      ].join(" ");
      const run = await openCode(cwd, MAIN_MODEL, [prompt]);
      expect(run.code, run.diagnostics).toBe(0);
      expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe(`alpha-${nonce}\n`);
      const tools = toolUses(run);
      expect(tools.map((e) => e.part?.tool).sort(), run.diagnostics).toEqual(["bash", "bash", "read"]);
      expect(tools.every((e) => e.part?.state?.status === "completed")).toBe(true);
      expect(texts(run)).toMatch(new RegExp(`read returned: [^]*bravo-${nonce}`));
      const finishes = run.events.filter((e) => e.type === "step_finish").map((e) => e.part?.reason);
      expect(finishes).toEqual(["tool-calls", "tool-calls", "stop"]);
      const turns = await turnsSince(before, MAIN_MODEL);
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "the model variant changed between prompts of one session reaches Cursor, on the session's conversation",
    async () => {
      const cwd = emulator.home.folder("variant");
      const before = await turnCount();
      const first = await openCode(cwd, VARIANT_MODEL, ["--variant", "high", "Which model? [[emu:echo-model]]"]);
      expect(first.code, first.diagnostics).toBe(0);
      expect(texts(first)).toMatch(/Model: gpt-5\.5; params: [^;]*reasoning=high[,;]/);
      const second = await openCode(cwd, VARIANT_MODEL, [
        "--continue",
        "--variant",
        "low",
        "And now? [[emu:echo-model]]",
      ]);
      expect(second.code, second.diagnostics).toBe(0);
      expect(texts(second)).toMatch(/Model: gpt-5\.5; params: [^;]*reasoning=low[,;]/);
      const turns = await turnsSince(before, VARIANT_MODEL);
      expect(turns, JSON.stringify(turns)).toHaveLength(2);
      // A new bridge child served the second prompt and continued the conversation the first one stored.
      expect(turns[1]?.conversationId, JSON.stringify(turns)).toBe(turns[0]?.conversationId);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a run stopped in the middle of a streamed answer with tool calls, then continued with a new prompt",
    async () => {
      const cwd = emulator.home.folder("abort-streaming");
      const before = await turnCount();
      const opening = await openCode(cwd, MAIN_MODEL, ["Hello there."]);
      expect(opening.code, opening.diagnostics).toBe(0);
      const marker = join(cwd, "first-call-ran");
      // The second call stops forming halfway (`tool-cut`): the answer stays open while OpenCode runs the first.
      const calls = `[[emu:tool bash {"command":"touch ${marker}"}]] [[emu:tool bash {"command":"echo second-call"}]]`;
      const words = ["--continue", `Two things. [[emu:tool-cut 2]] ${calls}`];
      const slow = startOpenCode(args(MAIN_MODEL, words), { cwd, env });
      await until(async () => existsSync(marker), "the first tool call to run");
      slow.child.kill("SIGINT");
      await slow.done;
      // OpenCode's bridge child went with it, and the Cursor Run with the child.
      await until(async () => (await turnsSince(before, MAIN_MODEL))[1]?.outcome !== undefined, "the Run to end");

      const next = await openCode(cwd, MAIN_MODEL, ["--continue", "[[emu:recall]] Never mind."]);
      expectAnswered(next, /First message: "?Hello there\.?"?/);
      const turns = await turnsSince(before, MAIN_MODEL);
      expect(turns, JSON.stringify(turns)).toHaveLength(3);
      expect(turns[1]?.outcome).not.toBe("completed");
      expect(turns[2]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );
});
