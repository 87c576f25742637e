/**
 * A real ACP client end to end: acpx (pinned in test/clients) drives `cursor-bridge acp` (the real CLI, a child
 * process with its own HOME) against an in-process emulator, through one saved session: text turns, Cursor's native
 * execs run through the client (fs/read_text_file, a terminal, fs/write_text_file), a refused permission, a cancel
 * mid-turn, one Run per prompt, and `session/load` in a fresh agent process; then an MCP server from `session/new`.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { missingBinaries } from "../cluster/support/redis-server.js";
import { runClient, startClient } from "../e2e/support/client-process.js";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { CLIENTS_DIR, ensureTestClients } from "../e2e/support/test-clients.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));
const MCP_SERVER = fileURLToPath(new URL("./fixtures/echo-mcp-server.mjs", import.meta.url));
const ACPX = join(CLIENTS_DIR, "node_modules", ".bin", "acpx");
const RUN_TIMEOUT_MS = 60_000;

interface RpcMessage {
  id?: number;
  method?: string;
  params?: { update?: { sessionUpdate: string; content?: { type: string; text?: string }; status?: string } };
  result?: { stopReason?: string; content?: string };
}

function rpcMessages(stdout: string): RpcMessage[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as RpcMessage);
}

function agentText(messages: RpcMessage[]): string {
  return messages
    .map((m) => m.params?.update)
    .filter((u) => u?.sessionUpdate === "agent_message_chunk")
    .map((u) => u?.content?.text ?? "")
    .join("");
}

function stopReasonOf(messages: RpcMessage[]): string | undefined {
  return messages.find((m) => m.result?.stopReason !== undefined)?.result?.stopReason;
}

const skipReason = await ensureTestClients();
/** `script` (util-linux) gives acpx the terminal it asks on. */
const noScript = skipReason === undefined ? missingBinaries("script") : undefined;
if (skipReason !== undefined) console.log(`skipping the acpx tests: ${skipReason}`);

// Each step starts Node processes (acpx, the agent, an MCP server): slow on a shared machine, hence the timeout.
describe.skipIf(skipReason !== undefined)("acpx drives cursor-bridge acp", { timeout: 120_000 }, () => {
  let emulator: Emulator;
  let home: TempHome;
  let project: string;
  let agent: string;
  let env: NodeJS.ProcessEnv;

  const acpx = async (args: string[], timeoutMs = RUN_TIMEOUT_MS) => {
    const run = await runClient(ACPX, ["--agent", agent, "--cwd", project, ...args], { cwd: project, env, timeoutMs });
    return { ...run, messages: rpcMessages(run.stdout) };
  };
  const prompt = async (text: string, ...flags: string[]) => {
    const args = [...flags, "--format", "json", "--timeout", "45", "--ttl", "1", text];
    const run = await acpx(args);
    // acpx's own race: a prompt handed to its previous agent process just as that one's --ttl runs out is refused
    // ("Queue owner is shutting down", retryable) before it reaches any agent. Ask again once it is gone.
    if (!run.stdout.includes("QUEUE_OWNER_CLOSED")) return run;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return acpx(args);
  };
  const runs = () => {
    const stats = emulator.stats();
    return stats.runStreams + stats.runSseStreams;
  };

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    home = createTempHome("acp");
    project = join(home.dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "notes.txt"), "the notes say 42\n");
    agent = `${process.execPath} ${BIN} acp --upstream cursor --cursor-api-url ${emulator.url} --log-level warn`;
    env = { ...home.env, CURSOR_ACCESS_TOKEN: emulator.issueTokens().accessToken };
    const created = await acpx(["sessions", "new"]);
    expect(created.code, created.stderr).toBe(0);
  }, 90_000);

  afterAll(async () => {
    await emulator?.close();
    home?.remove();
  });

  it("runs a text turn on one Run", async () => {
    const before = runs();
    const run = await prompt("hello from acpx");
    expect(stopReasonOf(run.messages), run.stderr).toBe("end_turn");
    expect(agentText(run.messages)).toBe("You said: hello from acpx");
    expect(runs() - before).toBe(1);
  });

  it("reads a file of cwd through fs/read_text_file", async () => {
    const run = await prompt(`[[emu:native read {"path":"${join(project, "notes.txt")}"}]]`, "--approve-all");
    expect(
      run.messages.some((m) => m.method === "fs/read_text_file"),
      `${run.stdout}\n${run.stderr}`,
    ).toBe(true);
    expect(agentText(run.messages)).toContain("read returned: the notes say 42");
    const updates = run.messages.map((m) => m.params?.update?.sessionUpdate);
    expect(updates).toContain("tool_call");
    expect(updates).toContain("tool_call_update");
  });

  it("runs a shell command in the client's terminal after permission", async () => {
    const run = await prompt(
      '[[emu:native shell {"command":"echo made-$((6*7)) > shell-out.txt; cat shell-out.txt"}]]',
      "--approve-all",
    );
    const methods = run.messages.map((m) => m.method);
    expect(methods).toContain("session/request_permission");
    expect(methods).toContain("terminal/create");
    expect(methods).toContain("terminal/release");
    expect(agentText(run.messages)).toContain("shell returned: made-42");
    expect(readFileSync(join(project, "shell-out.txt"), "utf8")).toBe("made-42\n");
  });

  it("writes an edit through fs/write_text_file", async () => {
    const path = join(project, "notes.txt");
    const run = await prompt(
      `[[emu:native write {"path":"${path}","fileText":"edited by cursor\\n"}]]`,
      "--approve-all",
    );
    expect(run.messages.some((m) => m.method === "fs/write_text_file")).toBe(true);
    expect(run.stdout).toContain('"type":"diff"');
    expect(readFileSync(path, "utf8")).toBe("edited by cursor\n");
    expect(agentText(run.messages)).toContain("write returned: wrote 1 lines");
  });

  it("shows Cursor's message for a usage limit, not a bare internal error", async () => {
    const run = await prompt("[[emu:error usage_limit]]");
    const output = `${run.stdout}\n${run.stderr}`;
    expect(output).toContain("Cursor usage limit reached");
    expect(output).not.toContain('"message":"Internal error"');
  });

  it("turns a refused permission into a rejected result and goes on", async () => {
    const run = await prompt('[[emu:native shell {"command":"touch denied-marker"}]]', "--deny-all");
    expect(stopReasonOf(run.messages), run.stderr).toBe("end_turn");
    expect(agentText(run.messages)).toContain("shell returned: rejected: The user rejected running");
    expect(existsSync(join(project, "denied-marker"))).toBe(false);
  });

  it("cancels a turn mid-stream with Cursor's CancelAction", async () => {
    // Past --ttl 1 of the previous prompt: a fresh agent process, so acpx's queue-owner race cannot refuse it.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const started = startClient(
      ACPX,
      [
        "--agent",
        agent,
        "--cwd",
        project,
        "--format",
        "json",
        "--timeout",
        "45",
        "--ttl",
        "1",
        "[[emu:tokens 2000]] [[emu:rate 40]]",
      ],
      { cwd: project, env, timeoutMs: RUN_TIMEOUT_MS },
    );
    // Wait until the turn streams, then cancel it from a second acpx process.
    const deadline = Date.now() + 30_000;
    let ended = false;
    void started.done.then(() => (ended = true));
    while (!ended && !emulator.stats().turns.some((t) => t.outcome === undefined) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cancel = await acpx(["cancel"]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const run = await started.done;
    const messages = rpcMessages(run.stdout);
    expect(stopReasonOf(messages), run.stderr).toBe("cancelled");
    expect(emulator.stats().turns.at(-1)?.outcome).toBe("cancelled");
  });

  it("continues the same Cursor conversation in a fresh agent process after session/resume", async () => {
    await new Promise((resolve) => setTimeout(resolve, 2000)); // past --ttl 1: the next prompt starts a new agent
    const before = runs();
    const run = await prompt("[[emu:recall]]");
    // The agent advertises session/resume, so acpx continues with it rather than replaying with session/load.
    expect(run.messages.some((m) => m.method === "session/resume")).toBe(true);
    expect(agentText(run.messages)).toBe("First message: hello from acpx");
    expect(runs() - before).toBe(1);
  });

  it("offers the tools of an MCP server from session/new and routes Cursor's call to it", async () => {
    const log = join(home.dir, "mcp-calls.log");
    const config = join(home.dir, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: [
          { name: "echo", command: process.execPath, args: [MCP_SERVER], env: [{ name: "ECHO_MCP_LOG", value: log }] },
          { name: "broken", command: join(home.dir, "no-such-server") },
        ],
      }),
    );
    const created = await acpx(["--mcp-config", config, "sessions", "new", "--name", "mcp"]);
    expect(created.code, created.stderr).toBe(0);
    // An MCP tool call asks permission (echo is not annotated read-only): approved here.
    const run = await acpx([
      "--approve-all",
      "--mcp-config",
      config,
      "--format",
      "json",
      "--timeout",
      "45",
      "--ttl",
      "1",
      "prompt",
      "-s",
      "mcp",
      '[[emu:tool echo__echo {"text":"ping"}]]',
    ]);
    expect(agentText(run.messages), run.stderr).toContain("echo__echo returned: echo: ping");
    expect(readFileSync(log, "utf8")).toBe("ping\n");
    expect(agentText(run.messages)).toContain("MCP server broken failed to start");
  });

  it.skipIf(noScript !== undefined)(
    "asks in a terminal as 'Allow <the tool's title> [edit]?' for a write, and does not read a new file first",
    async () => {
      const path = join(project, "brand-new.txt");
      const line = [ACPX, "--agent", agent, "--cwd", project, "--format", "text", "--timeout", "45", "exec"]
        .concat(`[[emu:native write {"path":"${path}","fileText":"made new\\n"}]]`)
        .map(shellQuote)
        .join(" ");
      // acpx asks only on a terminal: `script` gives it one, and the test answers "y" to each question.
      const child = spawn("script", ["-qfec", line, "/dev/null"], {
        cwd: project,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let output = "";
      const onData = (part: Buffer) => {
        output += part.toString("utf8");
        if (part.toString("utf8").includes("(y/N)")) child.stdin.write("y\r");
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      clearTimeout(timer);
      expect(code, output).toBe(0);
      expect(output).toContain(`[permission] Allow Write ${path} [edit]?`);
      expect(output).not.toContain("Allow tool [other]");
      expect(output).not.toMatch(/not found/i);
      expect(readFileSync(path, "utf8")).toBe("made new\n");
    },
  );
});

/** One word for `sh -c`. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
