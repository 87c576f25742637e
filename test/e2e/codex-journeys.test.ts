/**
 * Journeys a Codex CLI user makes every day, with the real client (0.169.0, test/clients) against `cursor-bridge
 * serve` (/v1/responses) and the emulator: a multi-step task mixing shell commands (two at once, one failing) and
 * `apply_patch` on a file, a command whose output is large, and `codex exec resume --last` after the process exited.
 * Each checks what the user sees (the files changed, the final message, exit 0) and, from the emulator's per-Run
 * statistics, that the tool round trips stayed on one Cursor Run and the resumed session continued the same Cursor
 * conversation although Codex re-sends the whole history.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { agentMessages, CODEX_TIMEOUT_MS, commands, execOptions, runCodex, writeCatalog } from "./support/codex.js";
import { useServedBridge } from "./support/served-bridge.js";
import { ensureTestClients } from "./support/test-clients.js";

const MODEL = "composer-1";
const TEST_TIMEOUT_MS = 3 * CODEX_TIMEOUT_MS;

const tool = (name: string, args: Record<string, unknown>) => `[[emu:tool ${name} ${JSON.stringify(args)}]]`;

const reason = await ensureTestClients();
if (reason !== undefined) console.log(`skipping the Codex journey tests: ${reason}`);

describe.skipIf(reason !== undefined)("Codex CLI journeys → cursor-bridge serve (/v1/responses) → emulator", () => {
  const bridge = useServedBridge("codex-journeys");
  let catalog: string;

  beforeAll(async () => {
    catalog = await writeCatalog(bridge.home, [MODEL]);
  }, CODEX_TIMEOUT_MS);

  it(
    "a three-step task: two commands at once (one failing), then apply_patch, then a command reading the result",
    async () => {
      const nonce = randomBytes(5).toString("hex");
      const cwd = bridge.home.folder("multi-step");
      bridge.emulator.resetStats();
      const patch = `*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n+two-${nonce}\n*** End Patch\n`;
      const prompt = [
        "Start the notes, patch them, show them.",
        tool("exec_command", { cmd: "printf 'one\\n' > notes.txt" }),
        tool("exec_command", { cmd: "ls no-such-dir" }),
        "[[emu:then]]",
        tool("apply_patch", { input: patch }),
        "[[emu:then]]",
        tool("exec_command", { cmd: "cat notes.txt" }),
      ].join(" ");
      const run = await runCodex(bridge.home, ["exec", ...execOptions(bridge.baseURL, catalog, MODEL), prompt], cwd);
      expect(run.code, run.diagnostics).toBe(0);
      // What the tools did to the folder.
      expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe(`one\ntwo-${nonce}\n`);
      // Three commands ran for real; the failing one is reported failed with its exit code.
      const ran = commands(run);
      const byCommand = (part: string) => ran.find((c) => c.command?.includes(part));
      expect(ran, run.diagnostics).toHaveLength(3);
      expect(byCommand("printf")?.exit_code).toBe(0);
      expect(byCommand("no-such-dir")?.exit_code).not.toBe(0);
      expect(byCommand("no-such-dir")?.aggregated_output).toContain("No such file");
      expect(byCommand("cat notes.txt")?.exit_code).toBe(0);
      expect(byCommand("cat notes.txt")?.aggregated_output).toBe(`one\ntwo-${nonce}\n`);
      expect(run.events.some((e) => e.type === "item.completed" && e.item?.type === "file_change")).toBe(true);
      // The answer reports every call of every step.
      const last = agentMessages(run).at(-1) ?? "";
      expect(last.match(/exec_command returned:/g), run.diagnostics).toHaveLength(3);
      expect(last).toContain("apply_patch returned:");
      expect(last).toContain(`two-${nonce}`);
      expect(run.events.some((e) => e.type === "turn.completed")).toBe(true);
      expect(run.events.some((e) => e.type === "error" || e.type === "turn.failed")).toBe(false);
      // Every step's results resumed the same parked Cursor turn.
      const turns = bridge.emulator.stats().turns;
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a command with a large output (about 2 MB) is answered on the same Run",
    async () => {
      const cwd = bridge.home.folder("large-output");
      bridge.emulator.resetStats();
      const prompt = `Count a lot. ${tool("exec_command", { cmd: "seq 1 300000" })}`;
      const run = await runCodex(bridge.home, ["exec", ...execOptions(bridge.baseURL, catalog, MODEL), prompt], cwd);
      expect(run.code, run.diagnostics).toBe(0);
      const ran = commands(run);
      expect(ran).toHaveLength(1);
      expect(ran[0]?.exit_code).toBe(0);
      expect(ran[0]?.aggregated_output).toContain("300000");
      // Codex sends the model the head and the tail of the output (about 40 KB here); all of it came back.
      const last = agentMessages(run).at(-1) ?? "";
      expect(last, run.diagnostics).toMatch(
        /^exec_command returned: [\s\S]*Process exited with code 0[\s\S]*\n1\n2\n3\n/,
      );
      expect(last.endsWith("\n299999\n300000\n")).toBe(true);
      expect(last.length).toBeGreaterThan(20_000);
      const turns = bridge.emulator.stats().turns;
      expect(turns, JSON.stringify(turns)).toHaveLength(1);
      expect(turns[0]?.outcome).toBe("completed");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "codex exec resume --last after a session that ran a tool continues that session's Cursor conversation",
    async () => {
      const nonce = randomBytes(5).toString("hex");
      const cwd = bridge.home.folder("resume");
      bridge.emulator.resetStats();
      const options = execOptions(bridge.baseURL, catalog, MODEL, false);
      // A first session that used a tool: its history holds the call and its output when Codex sends it again.
      const prompt = `Remember ${nonce}. ${tool("exec_command", { cmd: `echo ${nonce}` })}`;
      const first = await runCodex(bridge.home, ["exec", ...options, prompt], cwd);
      expect(first.code, first.diagnostics).toBe(0);
      expect(agentMessages(first).at(-1)).toMatch(new RegExp(`exec_command returned: [^]*${nonce}`));
      const thread = first.events.find((e) => e.type === "thread.started")?.thread_id;
      expect(thread, first.diagnostics).toBeDefined();

      const resumed = await runCodex(
        bridge.home,
        ["exec", ...options, "resume", "--last", "[[emu:recall]] Still there?"],
        cwd,
      );
      expect(resumed.code, resumed.diagnostics).toBe(0);
      // Codex's first user message is its <environment_context>, read here from the conversation Cursor holds.
      expect(agentMessages(resumed).at(-1), resumed.diagnostics).toMatch(
        new RegExp(`^First message: <environment_context>[^]*<cwd>${cwd}</cwd>`),
      );
      expect(resumed.events.find((e) => e.type === "thread.started")?.thread_id).toBe(thread);

      const turns = bridge.emulator.stats().turns.filter((turn) => turn.model === MODEL);
      expect(turns, JSON.stringify(turns)).toHaveLength(2);
      // The whole history came again, and the bridge continued from its checkpoint instead of rebuilding it.
      expect(turns[1]?.conversationId, JSON.stringify(turns)).toBe(turns[0]?.conversationId);
      // From the checkpoint: Cursor fetched nothing of the history again (a rebuild uploads it as new blobs).
      expect(turns[1]?.getBlobRequests, JSON.stringify(turns)).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});
