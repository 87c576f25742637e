/**
 * Journeys an OpenCode user makes every day, with the real client (1.18.33, test/clients) configured with a provider
 * block against `cursor-bridge serve` and the emulator: a multi-step tool task (two commands at once, then a read and
 * a failing command), switching the model variant in the middle of a session, and a run stopped while its tool ran,
 * then continued. Each checks what the user sees (exit 0, the tool states, the final text) and, from the emulator's
 * per-Run statistics, that the tool round trips stayed on one Cursor Run and a continued session stayed on its Cursor
 * conversation.
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
  providerBlockEnv,
  runOpenCode,
  startOpenCode,
  openCodeText as texts,
  toolUses,
} from "./support/opencode.js";
import { useServedBridge } from "./support/served-bridge.js";
import { openCodeSkipReason } from "./support/test-clients.js";

const MAIN_MODEL = "composer-1";
/** A parameterised model of the emulator's catalogue (reasoning none…extra-high). */
const VARIANT_MODEL = "gpt-5.5";
const TITLE_MODEL = "claude-4.5-sonnet";
const TEST_TIMEOUT_MS = 3 * OPENCODE_TIMEOUT_MS;

const reason = await openCodeSkipReason();
if (reason !== undefined) console.log(`skipping the OpenCode journey tests: ${reason}`);

const variants = Object.fromEntries(["low", "high"].map((effort) => [effort, { reasoningEffort: effort }]));
const MODELS = { [MAIN_MODEL]: {}, [TITLE_MODEL]: {}, [VARIANT_MODEL]: { reasoning: true, variants } };

describe.skipIf(reason !== undefined)("OpenCode journeys → cursor-bridge serve → emulator", () => {
  const bridge = useServedBridge("opencode-journeys");
  let env: Record<string, string>;

  beforeAll(async () => {
    const choice = { main: MAIN_MODEL, small: TITLE_MODEL };
    env = await providerBlockEnv(bridge.home, bridge.baseURL, MODELS, choice, { permission: OPENCODE_PERMISSION });
  });

  const args = (model: string, words: string[]) => openCodeRunArgs(`bridge/${model}`, words);
  const openCode = (cwd: string, model: string, words: string[]): Promise<OpenCodeRun> =>
    runOpenCode(args(model, words), { cwd, env });
  const turnsOf = (model: string) => bridge.emulator.stats().turns.filter((turn) => turn.model === model);
  const until = (check: () => boolean, what: string) => waitFor(check, what, { timeoutMs: OPENCODE_TIMEOUT_MS });

  it(
    "a multi-step tool task: two commands at once, then a read and a failing command, on one Run",
    async () => {
      const nonce = randomBytes(5).toString("hex");
      const cwd = bridge.home.folder("multi-step");
      bridge.emulator.resetStats();
      const bash = (command: string) => `[[emu:tool bash ${JSON.stringify({ command, description: "Run it" })}]]`;
      const prompt = [
        "Write and check the notes.",
        bash(`echo alpha-${nonce} > a.txt`),
        bash(`echo bravo-${nonce} > b.txt`),
        "[[emu:then]]",
        `[[emu:tool read ${JSON.stringify({ filePath: join(cwd, "a.txt") })}]]`,
        bash("cat no-such-file"),
      ].join(" ");
      const run = await openCode(cwd, MAIN_MODEL, [prompt]);
      expect(run.code, run.diagnostics).toBe(0);
      expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe(`alpha-${nonce}\n`);
      expect(readFileSync(join(cwd, "b.txt"), "utf8")).toBe(`bravo-${nonce}\n`);
      // OpenCode reports each call when it completes, in whatever order the parallel ones finish.
      const tools = toolUses(run);
      expect(tools.map((e) => e.part?.tool).sort(), run.diagnostics).toEqual(["bash", "bash", "bash", "read"]);
      expect(tools.every((e) => e.part?.state?.status === "completed")).toBe(true);
      const read = tools.find((e) => e.part?.tool === "read");
      expect(read?.part?.state?.output).toContain(`alpha-${nonce}`);
      const failing = tools.find((e) => e.part?.state?.input?.command === "cat no-such-file");
      expect(failing?.part?.state?.output).toContain("No such file");
      const answer = texts(run);
      expect(answer.match(/bash returned:/g), run.diagnostics).toHaveLength(3);
      expect(answer).toMatch(new RegExp(`read returned: [^]*alpha-${nonce}`));
      expect(answer).toContain("No such file");
      const finishes = run.events.filter((e) => e.type === "step_finish").map((e) => e.part?.reason);
      expect(finishes).toEqual(["tool-calls", "tool-calls", "stop"]);
      const turns = turnsOf(MAIN_MODEL);
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "switching the model variant mid-session reaches Cursor and stays on the session's conversation",
    async () => {
      const cwd = bridge.home.folder("variant");
      bridge.emulator.resetStats();
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
      const turns = turnsOf(VARIANT_MODEL);
      expect(turns, JSON.stringify(turns)).toHaveLength(2);
      expect(turns[1]?.conversationId, JSON.stringify(turns)).toBe(turns[0]?.conversationId);
    },
    TEST_TIMEOUT_MS,
  );

  /** Opens a session with "Hello there.", then stops (SIGINT) a run of `prompt` in it once its tool made `marker`. */
  async function stopAfterOpening(cwd: string, marker: string, prompt: string, what: string): Promise<void> {
    bridge.emulator.resetStats();
    const opening = await openCode(cwd, MAIN_MODEL, ["Hello there."]);
    expect(opening.code, opening.diagnostics).toBe(0);
    const slow = startOpenCode(args(MAIN_MODEL, ["--continue", prompt]), { cwd, env });
    await until(() => existsSync(marker), what);
    slow.child.kill("SIGINT");
    await slow.done;
  }

  /** The prompt after the stopped run answers from the session's first message, with no error; its three turns. */
  async function continueAfterStop(cwd: string) {
    const next = await openCode(cwd, MAIN_MODEL, ["--continue", "[[emu:recall]] Never mind."]);
    // OpenCode quotes a prompt that holds a space.
    expectAnswered(next, /First message: "?Hello there\."?/);
    const turns = turnsOf(MAIN_MODEL);
    expect(turns, JSON.stringify(turns)).toHaveLength(3);
    return turns;
  }

  it(
    "a run stopped while its tool runs, then continued with a new prompt",
    async () => {
      const cwd = bridge.home.folder("abort");
      const marker = join(cwd, "started");
      const prompt = `Wait. [[emu:tool bash {"command":"touch ${marker}; sleep 60"}]]`;
      await stopAfterOpening(cwd, marker, prompt, "the tool to start");

      const turns = await continueAfterStop(cwd);
      // The stopped turn's Run (parked on the bash call) was let go once the next request answered that call (as
      // aborted) and went on, and the new prompt stayed on the session's conversation.
      expect(turns.map((turn) => turn.outcome)).toEqual(["completed", "cancelled", "completed"]);
      expect(new Set(turns.map((turn) => turn.conversationId)).size, JSON.stringify(turns)).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a run stopped in the middle of a streamed answer with tool calls, then continued with a new prompt",
    async () => {
      const cwd = bridge.home.folder("abort-streaming");
      const marker = join(cwd, "first-call-ran");
      // The model streams a first call, then a second whose arguments stop forming halfway (`tool-cut`): the answer
      // stays open on the half-written call. OpenCode runs the first call as soon as its arguments are complete, while
      // the answer is still streaming, and is stopped there.
      const calls = `[[emu:tool bash {"command":"touch ${marker}"}]] [[emu:tool bash {"command":"echo second-call"}]]`;
      await stopAfterOpening(cwd, marker, `Two things. [[emu:tool-cut 2]] ${calls}`, "the first tool call to run");
      // The bridge let the Cursor Run go when OpenCode went away in the middle of the answer.
      await until(() => turnsOf(MAIN_MODEL)[1]?.outcome !== undefined, "the stopped Run to end");

      const turns = await continueAfterStop(cwd);
      // The stopped answer's Run was canceled upstream, not left open; the next prompt answered.
      expect(turns.map((turn) => turn.outcome)).toEqual(["completed", "cancelled", "completed"]);
    },
    TEST_TIMEOUT_MS,
  );
});
