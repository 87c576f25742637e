/**
 * Seeded fuzzer over the ACP agent (`cursor-bridge acp`): the real agent, served in-process over a pair of streams
 * through the same line limit and ndjson transport the command uses, on the real engine and the emulator. Each case
 * is one JSON-RPC line built from a valid message of a method the agent implements (initialize, authenticate,
 * session/new, load, resume, list, close, delete, fork, set_title, set_mode, set_config_option, set_model, prompt,
 * cancel) and then broken field by field (random JSON, wrong types, unknown fields, huge strings, deep nesting, hostile paths,
 * prompt content blocks of every kind with bad fields and bad image data), or a non-JSON line, a truncated line, a
 * batch, a notification instead of a request, an unknown method. Every request with an id must get exactly one
 * well-formed JSON-RPC response (a result, or an error with an integer code and a string message without a stack
 * trace), within 30 s; the agent never exits; the cases that cannot be valid cause no Cursor Run (they run first, with
 * the emulator's Run count compared before and after); and the agent still answers a valid prompt at the end. A
 * slice of the cases also goes through the real stdio transport of a spawned `cursor-bridge acp`.
 * `FUZZ_SEED` and `FUZZ_CASES` reproduce or widen a run; the seed and the counts are printed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { planUsageOf } from "../../src/cli/usage.js";
import { type AcpAgent, createAcpAgent } from "../../src/surfaces/acp/agent.js";
import { limitLines } from "../../src/surfaces/acp/line-limit.js";
import { acpSessionStoreOver } from "../../src/surfaces/acp/session-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { type AcpUpstream, startUpstream } from "../acp/support.js";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { pngImage } from "../support/images.js";
import { Gen, nodes, prng } from "./support/fuzz-cases.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const CASES = Number(process.env.FUZZ_CASES ?? 10_000);
/** Cases (of the invalid ones) also sent through a spawned `cursor-bridge acp` on stdio. */
const STDIO_CASES = Math.min(400, Math.ceil(CASES / 20));
const CONCURRENCY = 16;
/** No answer may take longer than this (a hang, or one request stalling the others). */
const MAX_ANSWER_MS = 30_000;
/** A small line limit for the in-process agent, so the over-limit path is fuzzed cheaply. */
const LINE_LIMIT = 256 * 1024;
const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

/** Placeholders in a case's line, replaced at send time by the run's session ids and folder. */
const LIVE = ["$LIVE0$", "$LIVE1$", "$LIVE2$"];
const FRESH = "$FRESH$";
const CWD = "$CWD$";

interface Case {
  line: string;
  /** The id the agent must answer, or undefined for a notification, a batch or a line that is not a request. */
  id: number | string | undefined;
  /** Whether the case may legitimately reach Cursor (a valid or possibly valid prompt). */
  mayRun: boolean;
  label: string;
}

const PNG = pngImage(2, 2).toString("base64");

function sessionRef(g: Gen): unknown {
  const roll = g.int(100);
  if (roll < 70) return g.pick(LIVE);
  if (roll < 80) return FRESH;
  if (roll < 88) return randomLike(g);
  return g.json();
}

function randomLike(g: Gen): string {
  return g.pick(["", "00000000-0000-0000-0000-000000000000", "../../etc/passwd", "x".repeat(5000), g.string()]);
}

function hostileCwd(g: Gen): unknown {
  if (g.chance(0.6)) return CWD;
  return g.pick([
    "relative/dir",
    "",
    "/",
    "/../../../etc",
    "/nonexistent/\u0000/nul",
    `/${"a".repeat(70_000)}`,
    "C:\\Windows",
    "~/x",
    "/tmp/line\nbreak",
    7,
    null,
    g.string(),
  ]);
}

function contentBlock(g: Gen): Record<string, unknown> {
  const kind = g.int(6);
  if (kind === 0) return { type: "text", text: `hello ${g.int(1_000_000)}` };
  if (kind === 1)
    return {
      type: "image",
      mimeType: g.pick(["image/png", "image/jpeg", "image/webp", "text/plain", ""]),
      data: g.pick([PNG, "AAAA", "not base64 !!", "", "=".repeat(9), "iVBORw0KGgo="]),
    };
  if (kind === 2) return { type: "resource_link", name: g.string(), uri: g.pick(["file:///x", "", "::"]) };
  if (kind === 3)
    return { type: "resource", resource: { uri: "file:///a.ts", text: g.string(), mimeType: "text/plain" } };
  if (kind === 4) return { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA" } };
  return { type: "audio", mimeType: "audio/wav", data: "AAAA" };
}

/** A valid message of a method, before mutation; `prompt` is a text-only prompt when `valid`. */
function baseMessage(g: Gen, method: string): Record<string, unknown> {
  switch (method) {
    case "initialize":
      return {
        protocolVersion: g.pick([PROTOCOL_VERSION, 0, 99, "1"]),
        clientCapabilities: { fs: { readTextFile: g.chance(0.5), writeTextFile: g.chance(0.5) }, terminal: false },
      };
    case "authenticate":
      return { methodId: g.pick(["cursor-login", "cursor-browser", "nope", ""]) };
    case "session/new":
      return { cwd: hostileCwd(g), mcpServers: [] };
    case "session/load":
    case "session/resume":
    case "session/fork":
      return { sessionId: sessionRef(g), cwd: hostileCwd(g), mcpServers: [] };
    case "session/list":
      return g.chance(0.5) ? {} : { cwd: hostileCwd(g), cursor: g.chance(0.5) ? g.string() : null };
    case "session/close":
    case "session/delete":
      // Never the live sessions the later prompts need (a fresh one, made by a fuzzed session/new or fork).
      return { sessionId: g.chance(0.7) ? FRESH : g.chance(0.5) ? randomLike(g) : g.json() };
    case "session/set_title":
      return { sessionId: sessionRef(g), title: g.string() };
    case "session/set_mode":
      return { sessionId: sessionRef(g), modeId: g.pick(["agent", "ask", "plan", "yolo", ""]) };
    case "session/set_config_option":
      return {
        sessionId: sessionRef(g),
        configId: g.pick(["mode", "model", "thinking", "nope", ""]),
        value: g.pick(["agent", "ask", "composer-1", "default", "no-such-model", true, 3, ""]),
      };
    case "session/set_model":
      return { sessionId: sessionRef(g), modelId: g.pick(["composer-1", "sonnet-4.5", "no-such-model", "", 3]) };
    case "session/prompt":
      return { sessionId: sessionRef(g), prompt: Array.from({ length: 1 + g.int(3) }, () => contentBlock(g)) };
    case "session/cancel":
      return { sessionId: sessionRef(g) };
    default:
      return { anything: g.json() };
  }
}

function mutate(g: Gen, params: Record<string, unknown>): void {
  for (let i = 1 + g.int(3); i > 0; i--) {
    const all = nodes(params, 200);
    if (all.length === 0) return;
    const [parent, key] = g.pick(all);
    const op = g.int(5);
    if (op === 0) {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key as string];
    } else if (op <= 2) {
      (parent as Record<string | number, unknown>)[key] = g.json();
    } else if (op === 3) {
      (parent as Record<string | number, unknown>)[key] = g.pick([
        null,
        42,
        "x".repeat(100_000),
        [],
        {},
        g.nested(g.pick([50, 300])),
      ]);
    } else {
      params[g.pick([g.string(), "_meta", "__proto__", "constructor", "extra"])] = g.json();
    }
  }
}

const METHODS = [
  "initialize",
  "authenticate",
  "session/new",
  "session/load",
  "session/resume",
  "session/list",
  "session/close",
  "session/delete",
  "session/fork",
  "session/set_title",
  "session/set_mode",
  "session/set_config_option",
  "session/set_model",
  "session/prompt",
  "session/cancel",
];

/** Whether a prompt's params are certainly refused before the engine (so no Cursor Run may follow). */
function certainlyInvalidPrompt(params: unknown): boolean {
  const p = params as { sessionId?: unknown; prompt?: unknown } | null;
  if (typeof p !== "object" || p === null || Array.isArray(p)) return true;
  // A fresh session (one a fuzzed session/new or fork made) is live too.
  if (typeof p.sessionId !== "string" || !(LIVE.includes(p.sessionId) || p.sessionId === FRESH)) return true;
  if (!Array.isArray(p.prompt)) return true;
  // Audio is refused whatever else the prompt holds.
  return p.prompt.some(
    (b) => typeof b === "object" && b !== null && (b as { type?: unknown }).type === "audio" && p.prompt !== undefined,
  );
}

function fuzzCase(g: Gen, index: number): Case {
  const id: number | string = g.chance(0.8) ? 1_000_000 + index : `case-${index}`;
  const roll = g.int(100);
  const request = (method: string, params: unknown, withId = true): Case => {
    const message: Record<string, unknown> = { jsonrpc: "2.0", method };
    if (withId) message.id = id;
    if (params !== undefined) message.params = params;
    return { line: JSON.stringify(message), id: withId ? id : undefined, mayRun: false, label: method };
  };
  if (roll < 4) {
    const junk = g.pick(["", "not json", "{", "[]", "[1,2]", "null", "42", '"x"', "\u0000\u0001", "}{", g.string()]);
    return { line: junk.replaceAll("\n", " "), id: undefined, mayRun: false, label: "non-json" };
  }
  if (roll < 6) {
    const line = JSON.stringify({ jsonrpc: "2.0", id, method: "session/list", params: {} });
    return { line: line.slice(0, g.int(line.length)), id: undefined, mayRun: false, label: "truncated" };
  }
  if (roll < 8) {
    // JSON-RPC envelopes broken: wrong version, id types, method types, no method, result-shaped.
    const envelope: Record<string, unknown> = g.pick([
      { jsonrpc: "1.0", id, method: "session/list", params: {} },
      { id, method: "session/list", params: {} },
      { jsonrpc: "2.0", id, method: 42 },
      { jsonrpc: "2.0", id, method: null, params: {} },
      { jsonrpc: "2.0", id: { nested: true }, method: "session/list" },
      { jsonrpc: "2.0", id: [1], method: "session/list" },
      { jsonrpc: "2.0", id: index + 0.5, method: "session/list" },
      { jsonrpc: "2.0", id: 99_999_999, result: {} },
      { jsonrpc: "2.0", id: 99_999_998, error: { code: 1, message: "x" } },
      { jsonrpc: "2.0", id, method: "session/list", params: [] },
      { jsonrpc: "2.0", id, method: "session/list", params: "x" },
    ]);
    // Only the plain-id ones with a string method are requests the agent must answer.
    const answerable =
      envelope.jsonrpc === "2.0" &&
      (typeof envelope.id === "number" || typeof envelope.id === "string") &&
      typeof envelope.method === "string";
    return {
      line: JSON.stringify(envelope),
      id: answerable ? (envelope.id as number | string) : undefined,
      mayRun: false,
      label: "envelope",
    };
  }
  if (roll < 11) {
    const method = g.pick([
      "session/unknown",
      "fs/read_text_file",
      "",
      "_custom/x",
      "_cursor-bridge/message_too_large",
      "rpc.discover",
      "SESSION/PROMPT",
      g.string(),
    ]);
    return { ...request(method, g.chance(0.7) ? g.json() : undefined), label: "unknown-method" };
  }
  if (roll < 12 && g.chance(0.5)) {
    // Nesting deeper than JSON.stringify can build.
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const line = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"session/prompt","params":{"sessionId":"${LIVE[0]}","prompt":${deep}}}`;
    return { line, id, mayRun: false, label: "deep-nesting" };
  }
  if (roll < 12) {
    return {
      line: JSON.stringify({ jsonrpc: "2.0", id, method: "session/set_title", params: { t: "x".repeat(LINE_LIMIT) } }),
      id,
      mayRun: false,
      label: "over-limit",
    };
  }
  const method = g.pick(METHODS);
  const kind = g.int(100);
  let params: unknown = baseMessage(g, method);
  let label = `${method}:valid`;
  if (kind < 5) {
    params = g.pick([undefined, null, 42, "x", [], g.json()]);
    label = `${method}:no-params`;
  } else if (kind < 80) {
    mutate(g, params as Record<string, unknown>);
    label = `${method}:mutated`;
  }
  // Requests the agent answers as notifications and the other way round.
  const asNotification = method === "session/cancel" ? g.chance(0.8) : g.chance(0.05);
  const built = request(method, params, !asNotification);
  built.label = asNotification ? `${label}:notification` : label;
  if (method === "session/prompt") built.mayRun = !asNotification && !certainlyInvalidPrompt(params);
  return built;
}

interface Reply {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
  method?: unknown;
}

/** Undefined when a response is well-formed; otherwise what is wrong with it. */
function judge(reply: Reply): string | undefined {
  const hasResult = "result" in reply;
  const hasError = "error" in reply;
  if (hasResult === hasError) return "neither or both of result and error";
  if (hasError) {
    const error = reply.error;
    if (typeof error !== "object" || error === null) return "error is not an object";
    if (!Number.isInteger(error.code)) return "error code is not an integer";
    if (typeof error.message !== "string" || error.message === "") return "no message";
    if (/\n\s+at /.test(error.message)) return "stack trace in message";
    if (/\bat .+\.(?:ts|js):\d+/.test(JSON.stringify(error.data ?? ""))) return "stack trace in data";
    const foreign = /Cannot read propert|is not a function|undefined is not|is not iterable|TypeError|RangeError/;
    if (foreign.test(error.message)) return "raw foreign error text in message";
    if (foreign.test(JSON.stringify(error.data ?? ""))) return "raw foreign error text in data";
  }
  return undefined;
}

/** One end of a JSON-RPC line connection: writes lines, hands each parsed line to the run. */
interface Wire {
  write(line: string): void;
  onLine(listener: (line: string) => void): void;
  exited(): string | undefined;
  close(): Promise<void>;
}

function inProcessWire(acp: AcpAgent): Wire {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const fromAgent = new TransformStream<Uint8Array, Uint8Array>();
  const input = limitLines(toAgent.readable, { limit: LINE_LIMIT });
  const connection = acp.app.connect(ndJsonStream(fromAgent.writable, input));
  let closed: string | undefined;
  void connection.closed.then(() => (closed = "the connection closed"));
  const writer = toAgent.writable.getWriter();
  const encoder = new TextEncoder();
  const listeners: Array<(line: string) => void> = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    const reader = fromAgent.readable.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      for (const line of parts) if (line.trim() !== "") for (const l of listeners) l(line);
    }
  })();
  return {
    write: (line) => void writer.write(encoder.encode(`${line}\n`)).catch(() => undefined),
    onLine: (listener) => listeners.push(listener),
    exited: () => closed,
    close: async () => {
      connection.close();
      await writer.close().catch(() => undefined);
    },
  };
}

function stdioWire(home: TempHome): { wire: Wire; child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, "acp", "--upstream", "emulator", "--log-level", "error"], {
    cwd: home.dir,
    env: home.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  let exit: string | undefined;
  child.on("exit", (code, signal) => (exit = `the process exited (${code ?? signal})`));
  child.stderr?.setEncoding("utf8").on("data", (part: string) => (stderr = (stderr + part).slice(-4000)));
  child.stdin?.on("error", () => undefined);
  const listeners: Array<(line: string) => void> = [];
  let buffer = "";
  child.stdout?.setEncoding("utf8").on("data", (part: string) => {
    buffer += part;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const line of parts) if (line.trim() !== "") for (const l of listeners) l(line);
  });
  const wire: Wire = {
    write: (line) => void child.stdin?.write(`${line}\n`),
    onLine: (listener) => listeners.push(listener),
    exited: () => exit,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  return { wire, child, stderr: () => stderr };
}

/** A driver over a wire: sends requests, matches responses, answers the agent's own requests as an editor would. */
class Driver {
  private readonly pending = new Map<string, (reply: Reply) => void>();
  /** Responses seen per id (as JSON), to catch a second response to one request. */
  readonly seen = new Map<string, number>();
  readonly stray: string[] = [];
  readonly notParsed: string[] = [];
  nullIdErrors = 0;
  updates = 0;
  private nextId = 1;

  constructor(readonly wire: Wire) {
    wire.onLine((line) => this.onLine(line));
  }

  private onLine(line: string): void {
    let message: Reply;
    try {
      message = JSON.parse(line) as Reply;
    } catch {
      this.notParsed.push(line.slice(0, 200));
      return;
    }
    if (typeof message.method === "string") {
      if (message.id === undefined) {
        this.updates++;
        return;
      }
      // The agent asks the editor: permissions are granted once, everything else is refused (no fs, no terminal).
      const answer =
        message.method === "session/request_permission"
          ? { jsonrpc: "2.0", id: message.id, result: { outcome: { outcome: "selected", optionId: "allow-once" } } }
          : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } };
      this.wire.write(JSON.stringify(answer));
      return;
    }
    if (message.id === null) {
      this.nullIdErrors++;
      return;
    }
    const key = JSON.stringify(message.id);
    this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
    const resolve = this.pending.get(key);
    if (resolve === undefined) {
      if (this.stray.length < 10) this.stray.push(line.slice(0, 200));
      return;
    }
    this.pending.delete(key);
    resolve(message);
  }

  /** Sends a line; resolves with the response to `id` (rejects after the bound), or at once without an id. */
  send(line: string, id: number | string | undefined): Promise<Reply | undefined> {
    if (id === undefined) {
      this.wire.write(line);
      return Promise.resolve(undefined);
    }
    const key = JSON.stringify(id);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(key);
        reject(new Error(`no answer within ${MAX_ANSWER_MS / 1000} s`));
      }, MAX_ANSWER_MS);
      this.pending.set(key, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.wire.write(line);
    });
  }

  async call(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = `setup-${this.nextId++}`;
    const reply = await this.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }), id);
    if (reply?.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply?.result as Record<string, unknown>;
  }
}

interface RunContext {
  live: string[];
  fresh: string[];
  cwd: string;
}

function resolveLine(c: Case, ctx: RunContext): string {
  let line = c.line;
  LIVE.forEach((placeholder, i) => {
    line = line.replaceAll(placeholder, ctx.live[i] as string);
  });
  const fresh = ctx.fresh.length > 0 ? (ctx.fresh[line.length % ctx.fresh.length] as string) : randomUUID();
  line = line.replaceAll(FRESH, fresh);
  return line.replaceAll(CWD, ctx.cwd);
}

interface Tally {
  byLabel: Map<string, number>;
  results: number;
  errors: Map<number, number>;
  failures: string[];
}

async function runCases(
  driver: Driver,
  cases: Case[],
  ctx: RunContext,
  tally: Tally,
  concurrency = CONCURRENCY,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const c = cases[index] as Case;
      tally.byLabel.set(c.label, (tally.byLabel.get(c.label) ?? 0) + 1);
      let problem: string | undefined;
      try {
        const reply = await driver.send(resolveLine(c, ctx), c.id);
        if (reply !== undefined) {
          problem = judge(reply);
          if (problem === undefined && reply.error !== undefined) {
            const code = reply.error.code as number;
            tally.errors.set(code, (tally.errors.get(code) ?? 0) + 1);
          } else if (problem === undefined) {
            tally.results++;
            const id = (reply.result as { sessionId?: unknown } | null)?.sessionId;
            if (typeof id === "string" && ctx.fresh.length < 50) ctx.fresh.push(id);
          } else problem += ` — ${JSON.stringify(reply).slice(0, 300)}`;
        }
      } catch (error) {
        problem = `no answer: ${(error as Error).message}`;
      }
      const exited = driver.wire.exited();
      if (exited !== undefined) problem = exited;
      if (problem !== undefined && tally.failures.length < 20) {
        tally.failures.push(`[${c.label}] ${c.line.slice(0, 160)} → ${problem}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function newTally(): Tally {
  return { byLabel: new Map(), results: 0, errors: new Map(), failures: [] };
}

async function openSessions(driver: Driver, cwd: string): Promise<string[]> {
  await driver.call("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const live: string[] = [];
  for (let i = 0; i < LIVE.length; i++) {
    live.push((await driver.call("session/new", { cwd, mcpServers: [] })).sessionId as string);
  }
  return live;
}

describe("seeded fuzzer over the ACP agent", () => {
  let upstream: AcpUpstream;
  let acp: AcpAgent;
  let cwd: string;
  let home: TempHome;
  beforeAll(async () => {
    upstream = await startUpstream();
    acp = createAcpAgent({
      stack: async () => ({
        engine: upstream.engine,
        sessions: acpSessionStoreOver(upstream.responses),
        usage: async (signal) => planUsageOf(await upstream.api.getCurrentPeriodUsage(signal)),
      }),
      auth: {
        methods: [{ id: "cursor-login", name: "Stored login" }],
        authenticate: async (id) => {
          if (id !== "cursor-login") throw new Error(`Unknown authentication method ${id}.`);
        },
      },
      logger: silentLogger,
      version: "fuzz",
      defaultModel: "composer-1",
      newSessionId: randomUUID,
      now: Date.now,
    });
    cwd = mkdtempSync(join(tmpdir(), "cursor-bridge-acp-fuzz-"));
    home = createTempHome("acp-fuzz");
  });
  afterAll(async () => {
    await acp?.close();
    await upstream?.close();
    if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true });
    home?.remove();
  });

  it(`answers ${CASES} fuzzed JSON-RPC lines (seed ${SEED}) well-formed, with no Run for invalid input`, async () => {
    const g = new Gen(prng(SEED));
    const cases = Array.from({ length: CASES }, (_, i) => fuzzCase(g, i));
    const invalid = cases.filter((c) => !c.mayRun);
    const mayRun = cases.filter((c) => c.mayRun);
    // The SDK logs each notification it refuses (a broken session/cancel) with console.error: counted, not printed.
    const sdkLogs = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const wire = inProcessWire(acp);
    const driver = new Driver(wire);
    const started = Date.now();
    const ctx: RunContext = { live: await openSessions(driver, cwd), fresh: [], cwd };
    const tally = newTally();

    // The two answers the fuzzer once found broken, checked on their own: an authentication method the agent does
    // not offer, and the line limit's stand-in request forged by the editor without its params.
    const refused = async (method: string, params: unknown) =>
      (await driver.send(JSON.stringify({ jsonrpc: "2.0", id: method, method, params }), method))?.error;
    expect(await refused("authenticate", { methodId: "nope" })).toMatchObject({
      code: -32602,
      message: expect.stringContaining("cursor-login"),
    });
    const forged = await refused("_cursor-bridge/message_too_large", {});
    expect(forged).toMatchObject({ code: -32602 });
    expect(JSON.stringify(forged)).not.toMatch(/Cannot read|TypeError/);

    // Phase 1: the cases that cannot be valid prompts. None of them may reach Cursor.
    const runsBefore = upstream.emulator.stats().runStreams;
    await runCases(driver, invalid, ctx, tally);
    const runsByInvalid = upstream.emulator.stats().runStreams - runsBefore;

    // Phase 2: prompts that may be valid (valid ones and mutations that kept a valid shape), few at a time so that
    // most find their session idle and reach Cursor.
    await runCases(driver, mayRun, ctx, tally, 2);
    const runsTotal = upstream.emulator.stats().runStreams - runsBefore;

    // At the end the agent still answers a valid prompt on a fresh session.
    const session = await driver.call("session/new", { cwd, mcpServers: [] });
    const final = await driver.call("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "still there?" }],
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const exited = wire.exited();
    await wire.close();
    const refusedNotifications = sdkLogs.mock.calls.length;
    sdkLogs.mockRestore();

    const repeated = [...driver.seen.entries()].filter(([, n]) => n > 1).map(([id, n]) => `${id}×${n}`);
    const errors = [...tally.errors.entries()].sort(([a], [b]) => a - b).map(([c, n]) => `${c}:${n}`);
    const labels = [...tally.byLabel.entries()].sort().map(([l, n]) => `${l}:${n}`);
    process.stdout.write(
      `reliability: ACP fuzzer seed=${SEED} ran ${CASES} cases in-process in ${seconds} s ` +
        `(${invalid.length} invalid, ${mayRun.length} possibly valid prompts); results ${tally.results}; ` +
        `errors ${errors.join(" ")}; parse/null-id errors ${driver.nullIdErrors}; notifications refused ${refusedNotifications}; updates ${driver.updates}; ` +
        `Cursor Runs by invalid cases ${runsByInvalid}, by all ${runsTotal}; kinds ${labels.join(" ")}; ` +
        `failures ${tally.failures.length}\n`,
    );
    expect(tally.failures).toEqual([]);
    expect(repeated).toEqual([]);
    expect(driver.stray).toEqual([]);
    expect(driver.notParsed).toEqual([]);
    expect(exited).toBeUndefined();
    expect(runsByInvalid).toBe(0);
    expect(final.stopReason).toBe("end_turn");
    // The fuzzer reached the handlers, not only the envelope checks, and valid prompts ran.
    expect(tally.results).toBeGreaterThan(CASES / 20);
    expect(runsTotal).toBeGreaterThan(0);
  }, 600_000);

  it(`answers ${STDIO_CASES} of the invalid cases through the stdio transport of cursor-bridge acp`, async () => {
    const g = new Gen(prng(SEED + 1));
    const cases = Array.from({ length: STDIO_CASES * 2 }, (_, i) => fuzzCase(g, i))
      // Not authenticate: the real command's login flows would poll Cursor's login service and open a browser.
      .filter((c) => !c.mayRun && c.label !== "over-limit" && !c.label.startsWith("authenticate"))
      .slice(0, STDIO_CASES);
    const { wire, stderr } = stdioWire(home);
    const driver = new Driver(wire);
    const ctx: RunContext = { live: await openSessions(driver, cwd), fresh: [], cwd };
    const tally = newTally();
    await runCases(driver, cases, ctx, tally);
    const list = await driver.call("session/list", {});
    const exited = wire.exited();
    await wire.close();
    const errors = [...tally.errors.entries()].sort(([a], [b]) => a - b).map(([c, n]) => `${c}:${n}`);
    process.stdout.write(
      `reliability: ACP fuzzer on stdio seed=${SEED + 1} ran ${cases.length} cases; results ${tally.results}; ` +
        `errors ${errors.join(" ")}; failures ${tally.failures.length}\n`,
    );
    expect(tally.failures, stderr()).toEqual([]);
    expect([...driver.seen.values()].filter((n) => n > 1)).toEqual([]);
    expect(driver.stray).toEqual([]);
    expect(driver.notParsed).toEqual([]);
    expect(exited, stderr()).toBeUndefined();
    expect(Array.isArray(list.sessions)).toBe(true);
  }, 300_000);
});
