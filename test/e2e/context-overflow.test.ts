/**
 * A context overflow as a real client sees it: Cursor's bare `resource_exhausted` (`[[emu:overflow]]`) on a request
 * of more than half the model's window becomes the Messages door's 400 "prompt is too long: N tokens > M maximum",
 * which Claude Code 2.1.330 recognises as its own "prompt is too long" case (not a usage limit, not a retry storm).
 * The prompt is piped on stdin: it is longer than one command-line argument may be.
 */
import { describe, expect, it } from "vitest";
import { type ClientRun, clientDiagnostics, runClient } from "./support/client-process.js";
import { emulatorStats } from "./support/plugin-env.js";
import { useServedBridge } from "./support/served-bridge.js";
import { clientBin, ensureTestClients } from "./support/test-clients.js";

const MODEL = "composer-1";
const RUN_TIMEOUT_MS = 150_000;
/** About 120k estimated tokens: over half of composer's 200k window. */
const LONG_PROMPT = `${"lorem ipsum dolor ".repeat(27_000)} [[emu:overflow]]`;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the context-overflow end-to-end test: ${reason}`);

const diagnostics = (result: ClientRun) => clientDiagnostics(result, { stdoutChars: 4000, stderrChars: 3000 });

describe.skipIf(reason !== undefined)("context overflow → Claude Code", () => {
  const bridge = useServedBridge("context-overflow");

  it(
    "Claude Code shows its 'prompt is too long' handling, not a usage limit",
    async () => {
      const dir = bridge.home.folder("claude");
      const env = {
        ...bridge.home.env,
        TMPDIR: bridge.home.folder("claude-tmp"),
        ANTHROPIC_BASE_URL: bridge.baseURL.replace(/\/v1$/, ""),
        ANTHROPIC_API_KEY: "e2e",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      };
      const before = (await emulatorStats(bridge.emulator.url)).turns.length;
      const args = ["-p", "--output-format", "stream-json", "--verbose", "--max-turns", "2", "--model", MODEL];
      const result = await runClient(clientBin("claude"), args, {
        cwd: dir,
        env,
        timeoutMs: RUN_TIMEOUT_MS,
        stdin: LONG_PROMPT,
      });
      const last = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}") as {
        is_error?: boolean;
        result?: string;
      };
      expect(last.is_error, diagnostics(result)).toBe(true);
      // Claude Code's own wording for it: "Prompt is too long · the request is ~N tokens (limit M) …".
      expect(last.result, diagnostics(result)).toMatch(/^Prompt is too long/);
      expect(last.result, diagnostics(result)).not.toMatch(/usage limit/i);
      const turns = (await emulatorStats(bridge.emulator.url)).turns.slice(before) as Array<{ outcome?: string }>;
      expect(turns.length, diagnostics(result)).toBeGreaterThan(0);
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
