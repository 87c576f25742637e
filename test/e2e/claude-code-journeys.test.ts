/**
 * Journeys a Claude Code user makes every day, with the real client (2.1.330, test/clients) against `cursor-bridge
 * serve` and the emulator: a multi-step task whose steps make several tool calls at once and one of which fails,
 * a session resumed by id (and forked) after the process exited, a very long answer, a turn interrupted with
 * Ctrl-C (mid-answer, or while its Bash command runs) and a new prompt after it, and the effort chosen with
 * `--effort`. Each checks what the user sees (the
 * final answer, the files the tools changed, no error) and, from the emulator's per-Run statistics, that a tool
 * round trip stayed on its Cursor Run and a later prompt continued the same Cursor conversation.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CLAUDE_TIMEOUT_MS,
  type ClaudeOptions,
  finalResult,
  jsonLines,
  runClaude,
  startClaude,
  toolResults,
} from "./support/claude-code.js";
import { waitFor } from "./support/client-process.js";
import { useServedBridge } from "./support/served-bridge.js";
import { ensureTestClients } from "./support/test-clients.js";

const MAIN_MODEL = "claude-4.5-sonnet";
const BACKGROUND_MODEL = "composer-1";
const TEST_TIMEOUT_MS = 2 * CLAUDE_TIMEOUT_MS + 60_000;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the Claude Code journey tests: ${reason}`);

describe.skipIf(reason !== undefined)("Claude Code journeys → cursor-bridge serve → emulator", () => {
  const bridge = useServedBridge("claude-journeys");

  /** A fresh project folder and the options of a run in it. */
  function project(name: string, extra: Partial<ClaudeOptions> = {}): ClaudeOptions {
    const { home } = bridge;
    const baseURL = bridge.baseURL.replace(/\/v1$/, "");
    return { home, cwd: home.folder(name), baseURL, model: MAIN_MODEL, backgroundModel: BACKGROUND_MODEL, ...extra };
  }
  const mainTurns = () => bridge.emulator.stats().turns.filter((turn) => turn.model === MAIN_MODEL);
  const until = (check: () => boolean, what: string) => waitFor(check, what, { timeoutMs: CLAUDE_TIMEOUT_MS });

  it(
    "a three-step task: two parallel writes, then a read and a failing command, then a last command, on one Run",
    async () => {
      const nonce = randomBytes(5).toString("hex");
      const options = project("multi-step");
      bridge.emulator.resetStats();
      const bash = (command: string, description: string) =>
        `[[emu:tool Bash ${JSON.stringify({ command, description })}]]`;
      const prompt = [
        "Write two files, check them, then finish.",
        bash(`echo alpha-${nonce} > a.txt`, "Write a"),
        bash(`echo bravo-${nonce} > b.txt`, "Write b"),
        "[[emu:then]]",
        bash("cat a.txt b.txt", "Read both"),
        bash("cat missing.txt", "Read a missing file"),
        "[[emu:then]]",
        bash(`echo finished-${nonce}`, "Finish"),
      ].join(" ");
      const run = await runClaude(["-p", prompt], options);
      const result = finalResult(run);
      const diagnostics = `${run.stderr}\n${run.stdout}`;
      expect(result.subtype, diagnostics).toBe("success");
      expect(result.is_error, diagnostics).toBe(false);
      // The files the first step's tools wrote.
      expect(readFileSync(join(options.cwd, "a.txt"), "utf8")).toBe(`alpha-${nonce}\n`);
      expect(readFileSync(join(options.cwd, "b.txt"), "utf8")).toBe(`bravo-${nonce}\n`);
      expect(existsSync(join(options.cwd, "missing.txt"))).toBe(false);
      // Claude Code ran five commands and sent back five results, the missing file's as an error.
      const results = toolResults(run);
      expect(results, diagnostics).toHaveLength(5);
      expect(results.filter((r) => r.isError).map((r) => r.content)).toEqual([expect.stringContaining("missing.txt")]);
      // The answer reports every call of every step; the failed one reached Cursor as an error (is_error).
      const text = String(result.result);
      expect(text).toContain(`Bash returned: alpha-${nonce}\nbravo-${nonce}`);
      expect(text).toMatch(/Bash returned: error: [^\n]*\ncat: missing\.txt/);
      expect(text).toContain(`Bash returned: finished-${nonce}`);
      expect(text.match(/Bash returned:/g)).toHaveLength(5);
      // Every step's results resumed the same parked Cursor turn: one Run, completed.
      const turns = mainTurns();
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "--resume <session id> after the process exited continues that session's Cursor conversation, forked too",
    async () => {
      const nonce = randomBytes(5).toString("hex");
      const options = project("resume");
      bridge.emulator.resetStats();
      const first = finalResult(await runClaude(["-p", `Remember ${nonce}.`], options));
      const sessionId = String(first.session_id);
      expect(String(first.result)).toMatch(new RegExp(`You said: [^]*Remember ${nonce}\\.`));
      // Another session in the same folder, so that only the id picks the first one (--continue would not).
      finalResult(await runClaude(["-p", "Something else entirely."], options));

      const resumed = await runClaude(["--resume", sessionId, "-p", "[[emu:recall]] Still there?"], options);
      const recall = finalResult(resumed);
      expect(recall.subtype, `${resumed.stderr}\n${resumed.stdout}`).toBe("success");
      expect(String(recall.result)).toMatch(firstMessage(`Remember ${nonce}.`));
      expect(recall.session_id).toBe(sessionId);

      const forked = await runClaude(
        ["--resume", sessionId, "--fork-session", "-p", "[[emu:recall]] From the fork?"],
        options,
      );
      const fork = finalResult(forked);
      expect(fork.subtype, `${forked.stderr}\n${forked.stdout}`).toBe("success");
      expect(String(fork.result)).toMatch(firstMessage(`Remember ${nonce}.`));
      expect(fork.session_id).not.toBe(sessionId);

      // The original session goes on after its fork.
      const again = finalResult(await runClaude(["--resume", sessionId, "-p", "[[emu:recall]] Once more?"], options));
      expect(again.subtype).toBe("success");
      expect(String(again.result)).toMatch(firstMessage(`Remember ${nonce}.`));

      const turns = mainTurns();
      expect(turns, JSON.stringify(turns)).toHaveLength(5);
      expect(turns.every((turn) => turn.outcome === "completed")).toBe(true);
      // Resumed (and forked) from the first session's Cursor conversation, not from the other session's.
      const [firstTurn, otherTurn, resumedTurn] = turns;
      expect(otherTurn?.conversationId).not.toBe(firstTurn?.conversationId);
      expect(resumedTurn?.conversationId).toBe(firstTurn?.conversationId);
      // From the checkpoint: Cursor fetched nothing of the history again (a rebuild uploads it as new blobs).
      expect(resumedTurn?.getBlobRequests, JSON.stringify(turns)).toBe(0);
    },
    4 * CLAUDE_TIMEOUT_MS,
  );

  it(
    "a very long answer (20,000 tokens) arrives whole",
    async () => {
      const options = project("long-answer");
      const run = await runClaude(["-p", "Write a lot. [[emu:tokens 20000]]"], options);
      const result = finalResult(run);
      expect(result.subtype, run.stderr).toBe("success");
      const words = String(result.result).trim().split(/\s+/);
      expect(words).toHaveLength(20_000);
      expect(words.slice(0, 3)).toEqual(["alpha", "bravo", "charlie"]);
      expect(words.at(-1)).toBe("juliet");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a turn interrupted with Ctrl-C mid-answer, then new prompts with --continue",
    async () => {
      const options = project("interrupt");
      bridge.emulator.resetStats();
      const opening = finalResult(await runClaude(["-p", "Hello there."], options));
      expect(opening.subtype).toBe("success");
      const slow = startClaude(
        ["--continue", "-p", "Tell me a long story. [[emu:rate 20]] [[emu:tokens 2000]]", "--include-partial-messages"],
        options,
      );
      let output = "";
      slow.child.stdout?.on("data", (part: Buffer | string) => (output += part.toString()));
      // Interrupt once the answer is streaming.
      await until(() => output.includes("text_delta"), "the answer to start streaming");
      slow.child.kill("SIGINT");
      const interrupted = await slow.done;
      expect(jsonLines(interrupted.stdout).some((line) => line.type === "result" && line.subtype === "success")).toBe(
        false,
      );
      // The bridge let the Cursor Run go when Claude Code went away.
      await until(() => mainTurns()[1]?.outcome !== undefined, "the interrupted Run to end");
      expect(mainTurns()[1]?.outcome).not.toBe("completed");

      // Claude Code sends the partial answer back with "[Request interrupted by user]" and "No response requested.".
      const next = await runClaude(["--continue", "-p", "[[emu:recall]] Shorter, please."], options);
      const result = finalResult(next);
      expect(result.subtype, `${next.stderr}\n${next.stdout}`).toBe("success");
      expect(result.is_error).toBe(false);
      expect(String(result.result)).toMatch(firstMessage("Hello there."));
      const after = finalResult(await runClaude(["--continue", "-p", "[[emu:recall]] And now?"], options));
      expect(after.subtype).toBe("success");
      expect(String(after.result)).toMatch(firstMessage("Hello there."));

      const turns = mainTurns();
      expect(turns, JSON.stringify(turns)).toHaveLength(4);
      expect(turns.slice(2).map((turn) => turn.outcome)).toEqual(["completed", "completed"]);
      // Cursor's state never held the answer as the client kept it (cut by the interruption), so the prompt after it
      // is rebuilt from the history, once, as after a cut answer (docs/architecture.md); the next one continues that.
      expect(turns[2]?.conversationId).not.toBe(turns[0]?.conversationId);
      expect(turns[3]?.conversationId, JSON.stringify(turns)).toBe(turns[2]?.conversationId);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a turn interrupted with Ctrl-C while its Bash command runs, then a new prompt with --continue",
    async () => {
      const options = project("interrupt-tool");
      bridge.emulator.resetStats();
      const opening = finalResult(await runClaude(["-p", "Hello there."], options));
      expect(opening.subtype).toBe("success");
      const marker = join(options.cwd, "started");
      const command = `touch ${marker}; sleep 60`;
      const slow = startClaude(
        ["--continue", "-p", `Wait a minute. [[emu:tool Bash ${JSON.stringify({ command, description: "Wait" })}]]`],
        options,
      );
      await until(() => existsSync(marker), "the Bash command to start");
      slow.child.kill("SIGINT");
      await slow.done;

      const next = await runClaude(["--continue", "-p", "[[emu:recall]] Never mind."], options);
      const result = finalResult(next);
      expect(result.subtype, `${next.stderr}\n${next.stdout}`).toBe("success");
      expect(result.is_error).toBe(false);
      expect(String(result.result)).toMatch(firstMessage("Hello there."));
      const turns = mainTurns();
      expect(turns, JSON.stringify(turns)).toHaveLength(3);
      // The interrupted turn's Run (parked on the Bash call) was let go, not left open for its 15 minutes.
      await until(() => mainTurns()[1]?.outcome !== undefined, "the Run to end");
      expect(mainTurns().map((turn) => turn.outcome)).toEqual(["completed", "cancelled", "completed"]);
    },
    TEST_TIMEOUT_MS,
  );

  it.each([
    ["low", "effort=low"],
    ["max", "effort=max"],
  ])(
    "--effort %s reaches Cursor as the model's effort",
    async (effort, expected) => {
      const options = project(`effort-${effort}`, { model: "claude-opus-4-8" });
      const run = await runClaude(["-p", "Which model? [[emu:echo-model]]", "--effort", effort], options);
      const result = finalResult(run);
      expect(result.subtype, run.stderr).toBe("success");
      expect(String(result.result)).toMatch(new RegExp(`Model: claude-opus-4-8; params: [^;]*${expected}[,;]`));
    },
    TEST_TIMEOUT_MS,
  );
});

/** `First message: …` holding `text` (Claude Code puts its own <system-reminder> block before the prompt). */
function firstMessage(text: string): RegExp {
  return new RegExp(`First message: [^]*${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`);
}
