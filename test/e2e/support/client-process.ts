/**
 * Running a real client CLI in an end-to-end test: stdin closed (`opencode run` reads a piped stdin into the prompt,
 * `codex exec` waits on an open one) unless the test gives it (a prompt too long for a command-line argument),
 * output collected, a hard kill after a timeout so a hung client fails the test
 * instead of hanging it.
 */
import { type ChildProcess, spawn } from "node:child_process";

/** How a client process ended, with everything it printed. */
export interface ClientRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A started client: the process (to kill it) and its end. */
export interface StartedClient {
  child: ChildProcess;
  done: Promise<ClientRun>;
}

/** Starts `command`; it is killed with SIGKILL after `timeoutMs`. */
export function startClient(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; stdin?: string },
): StartedClient {
  const stdin = options.stdin === undefined ? "ignore" : "pipe";
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: [stdin, "pipe", "pipe"] });
  if (options.stdin !== undefined) {
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.stdin);
  }
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (part: string) => (stdout += part));
  child.stderr?.setEncoding("utf8").on("data", (part: string) => (stderr += part));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  const done = new Promise<ClientRun>((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

/** Runs `command` to its end (see {@link startClient}). */
export function runClient(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; stdin?: string },
): Promise<ClientRun> {
  return startClient(command, args, options).done;
}

/**
 * Exit code, stdout and the end of stderr of a client run, for an assertion's message. `stdoutChars` keeps only the end
 * of stdout (a long prompt's echo), `stderrChars` the end of stderr (4,000 characters unless told).
 */
export function clientDiagnostics(
  run: { code: number | null; stdout: string; stderr: string },
  { stdoutChars, stderrChars = 4000 }: { stdoutChars?: number; stderrChars?: number } = {},
): string {
  const stdout = stdoutChars === undefined ? run.stdout : run.stdout.slice(-stdoutChars);
  return `exit ${run.code}\nstdout:\n${stdout}\nstderr:\n${run.stderr.slice(-stderrChars)}`;
}

/**
 * The JSON lines a client printed (`--format json`, `--json`, stream-json), in order. An unfinished last line (a
 * client stopped in the middle of writing it) is left out; any other line that starts with `{` and is not JSON throws.
 */
export function jsonLines<T = Record<string, unknown>>(stdout: string): T[] {
  const lines = stdout.split("\n");
  return lines.flatMap((line, index) => {
    if (!line.trim().startsWith("{")) return [];
    try {
      return [JSON.parse(line) as T];
    } catch (error) {
      if (index === lines.length - 1) return [];
      throw error;
    }
  });
}

/** Polls `check` every `intervalMs` until it holds; rejects naming `what` after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs, intervalMs = 100 }: { timeoutMs: number; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A loopback port nothing listens on (a client's background npm installs fail fast against it). */
export { closedPort } from "../../support/processes.js";
