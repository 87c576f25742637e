/**
 * A context overflow as real OpenCode 1.18.33 sees it (provider block): chat's 400 `context_length_exceeded` in
 * OpenAI's words on a request over half the model's window is OpenCode's own `ContextOverflowError` (the error its
 * compaction acts on), never an API error it retries or a usage limit. The prompt is piped on stdin: it is longer
 * than one command-line argument may be. With `[[emu:overflow once]]` (only the emulator's first request carrying it
 * overflows) OpenCode's session, read offline with `opencode export`, shows the whole recovery: a compaction caused
 * by the overflow, the compaction agent's summary, then the same message sent again and answered (`[[emu:tokens 5]]`).
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ClientRun, clientDiagnostics } from "./support/client-process.js";
import { OPENCODE_TIMEOUT_MS, openCodeRunArgs, providerBlockEnv, runOpenCode } from "./support/opencode.js";
import { emulatorStats } from "./support/plugin-env.js";
import { useServedBridge } from "./support/served-bridge.js";
import { ensureTestClients, OPENCODE_BINARY } from "./support/test-clients.js";

const MODEL = "composer-1";
// `[[emu:tokens 5]]`: a short answer. The emulator's default echo of 486 KB would pass OpenCode's 8,000-token output
// cap, which the bridge enforces: that answer would be cut (and its Run released) before its end.
const ONCE_PROMPT = `${"lorem ipsum dolor ".repeat(27_000)} [[emu:overflow once]] [[emu:tokens 5]]`;
const LONG_PROMPT = `${"lorem ipsum dolor ".repeat(27_000)} [[emu:overflow]]`;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the OpenCode context-overflow test: ${reason}`);

const diagnostics = (result: ClientRun) => clientDiagnostics(result, { stdoutChars: 6000, stderrChars: 3000 });

/** One message of `opencode export`: its info and its parts. */
interface ExportedMessage {
  info: { role: string; summary?: unknown; mode?: string; agent?: string; error?: { name?: string } };
  parts: Array<{ type: string; text?: string; auto?: boolean; overflow?: boolean }>;
}

/**
 * OpenCode's own record of a session (`opencode export ID`), read offline from its data dir. Its stdout goes to a
 * file: through a pipe, OpenCode exits before a multi-megabyte export is flushed.
 */
function exportSession(id: string, cwd: string, env: Record<string, string>): { messages: ExportedMessage[] } {
  const file = join(cwd, "export.json");
  const fd = openSync(file, "w");
  try {
    const run = spawnSync(OPENCODE_BINARY, ["export", id], {
      cwd,
      env,
      stdio: ["ignore", fd, "pipe"],
      timeout: 60_000,
    });
    expect(run.status, run.stderr.toString()).toBe(0);
  } finally {
    closeSync(fd);
  }
  return JSON.parse(readFileSync(file, "utf8")) as { messages: ExportedMessage[] };
}

describe.skipIf(reason !== undefined)("context overflow → OpenCode", () => {
  const bridge = useServedBridge("context-overflow-opencode");
  /** A provider block with the model's window declared, so OpenCode knows when to compact. */
  const opencodeEnv = () => {
    const models = { [MODEL]: { limit: { context: 200_000, output: 8_000 } } };
    return providerBlockEnv(bridge.home, bridge.baseURL, models, { main: MODEL, small: MODEL });
  };
  const args = (words: string[]) => openCodeRunArgs(`bridge/${MODEL}`, words);

  it(
    "OpenCode classifies the bridge's answer as its ContextOverflowError, not a retried API error",
    async () => {
      const dir = bridge.home.folder("opencode");
      const env = await opencodeEnv();
      const before = (await emulatorStats(bridge.emulator.url)).turns.length;
      const result = await runOpenCode(args([]), { cwd: dir, env, stdin: LONG_PROMPT });
      const errors = result.events.filter((event) => event.type === "error");
      expect(errors.length, diagnostics(result)).toBeGreaterThan(0);
      for (const event of errors) {
        expect(event.error?.name, diagnostics(result)).toBe("ContextOverflowError");
        expect(event.error?.data?.message, diagnostics(result)).toMatch(
          /^This model's maximum context length is 200000 tokens\. However, your messages resulted in \d+ tokens\./,
        );
      }
      // It reached Cursor (the emulator), and OpenCode did not retry it as a transient API error (that would be 5+).
      const turns = (await emulatorStats(bridge.emulator.url)).turns.slice(before);
      expect(turns.length, diagnostics(result)).toBeGreaterThan(0);
      expect(turns.length, diagnostics(result)).toBeLessThan(5);
    },
    OPENCODE_TIMEOUT_MS + 30_000,
  );

  it(
    "OpenCode compacts on the overflow ([[emu:overflow once]]) and its retried request gets the emulator's answer",
    async () => {
      const dir = bridge.home.folder("opencode-once");
      const env = await opencodeEnv();
      // A first, small message makes the session and its title: OpenCode titles a session from its first message
      // only, so the long message's single overflow cannot be spent on a title request.
      const first = await runOpenCode(args(["hello"]), { cwd: dir, env });
      const sid = /"sessionID":"(ses_[A-Za-z0-9]+)"/.exec(first.stdout)?.[1];
      expect(sid, diagnostics(first)).toBeDefined();
      const before = (await emulatorStats(bridge.emulator.url)).turns.length;
      const result = await runOpenCode(args(["-s", sid ?? ""]), { cwd: dir, env, stdin: ONCE_PROMPT });
      // The run reports the overflow once, as its ContextOverflowError (and so exits 1 although it recovered; the
      // exit status is not asserted).
      const errors = result.stdout
        .split("\n")
        .filter((line) => line.startsWith('{"type":"error"'))
        .map((line) => (JSON.parse(line) as { error?: { name?: string } }).error?.name);
      expect(errors, diagnostics(result)).toEqual(["ContextOverflowError"]);
      // The emulator refused exactly one Run (the overflow), and every later one was served.
      const turns = (await emulatorStats(bridge.emulator.url)).turns.slice(before);
      expect(
        turns.map((turn) => turn.outcome),
        diagnostics(result),
      ).toEqual(["error:ResourceExhausted", ...turns.slice(1).map(() => "completed")]);
      expect(turns.length, diagnostics(result)).toBeGreaterThanOrEqual(3);

      // OpenCode's own record: the overflow made it compact (a compaction part marked as caused by an overflow,
      // then the compaction agent's summary), and then it sent the long message again and got the emulator's answer.
      const messages = exportSession(sid ?? "", dir, env).messages;
      const outline = JSON.stringify(messages.map((m) => [m.info.role, m.info.agent, m.parts.map((p) => p.type)]));
      const compaction = messages.findIndex((m) =>
        m.parts.some((p) => p.type === "compaction" && p.auto === true && p.overflow === true),
      );
      expect(compaction, outline).toBeGreaterThan(0);
      const summary = messages[compaction + 1];
      expect(summary?.info.role, outline).toBe("assistant");
      expect(summary?.info.agent, outline).toBe("compaction");
      expect(summary?.info.summary, outline).toBe(true);
      expect(summary?.info.error, outline).toBeUndefined();
      const retried = messages[compaction + 2];
      expect(retried?.info.role, outline).toBe("user");
      expect(
        retried?.parts.some((p) => p.text?.includes("[[emu:overflow once]]") === true),
        outline,
      ).toBe(true);
      const answer = messages[compaction + 3];
      expect(answer?.info.role, outline).toBe("assistant");
      expect(answer?.info.error, outline).toBeUndefined();
      expect(
        answer?.parts.some((p) => p.type === "text" && p.text?.includes("alpha bravo") === true),
        outline,
      ).toBe(true);
    },
    OPENCODE_TIMEOUT_MS + 90_000,
  );
});
