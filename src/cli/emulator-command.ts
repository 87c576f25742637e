/**
 * `cursor-bridge emulator`: the Cursor backend emulator on its own, for pointing a Cursor client (or this bridge
 * with --cursor-api-url) at it.
 */
import { readFile } from "node:fs/promises";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { isLoopbackHost } from "../config/host.js";
import { describeEmulatorDirectives } from "../emulator/directive-help.js";
import { EMULATOR_HTTP2_CONFIGS, type EmulatorHttp2Config } from "../emulator/http2-config.js";
import { DEFAULT_EMULATOR_PORT } from "../emulator/port.js";
import { ProxyError } from "../util/errors.js";
import { createLogger } from "../util/logger.js";
import { releaseYoungGeneration } from "../util/young-generation.js";
import { type Command, EXIT } from "./command.js";
import { parseErrorMessage } from "./parse-error.js";

const HELP = `Usage: cursor-bridge emulator [options]

Runs the Cursor backend emulator: a strict, scripted stand-in for Cursor's servers (agent.v1.AgentService/Run over
HTTP/2 cleartext, RunSSE + BidiAppend over HTTP/1.1, models, usage, and the /auth endpoints) on one port.

Options:
  --port <n>                     Port (default ${DEFAULT_EMULATOR_PORT}; 0 = any free port)
  --host <addr>                  Interface (default 127.0.0.1; loopback only)
  --bootstrap-latency-ms <n>     Delay before the first model output of each Run (default 0)
  --tokens-per-second <n>        Pace of scripted output (default 0 = unpaced)
  --max-concurrent-streams <n>   SETTINGS_MAX_CONCURRENT_STREAMS of each HTTP/2 connection (default unlimited):
                                 a client must open more connections for more concurrent Runs
  --no-tool-call-count           Do not announce a step's tool calls with tool_requests_listed.call_count (sent
                                 by default, so a client need not wait out its batch window); tests the fallback
  --api-key <key>                Accept this Cursor user API key at /auth/exchange_user_api_key, so
                                 \`cursor-bridge login --api-key\` and other clients can log in (repeatable; also
                                 CURSOR_BRIDGE_EMULATOR_API_KEYS, comma-separated)
  --min-client-version <v>       Oldest x-cursor-client-version served (cli-YYYY.MM.DD-sha; default
                                 cli-2025.11.25-d5b3271): older Runs fail with Cursor's "Update Required";
                                 GetServerConfig names it as the minimum, GET /install a build a day newer
  --http2-config <value>         GetServerConfig's http2_config hint (force-all-disabled, force-all-enabled,
                                 force-bidi-disabled, force-bidi-enabled; default unset): only sent, both
                                 transports keep being served
  --models <file>                Also serve these model ids (one per line, # comments), besides the built-in
                                 catalogue (Auto routed to composer-1.5, composer-1/1.5/2, claude-4.5/4.6, gpt-5.x
                                 with their -low/-high/-xhigh[-fast] and -codex variants, gemini-3, grok…)
  --catalogue <file>             Also serve the models of this JSON file: {"models": [...]}, each a model id (as
                                 --models) or a base model {"id", "displayName"?, "vendor"?, "parameters":
                                 [{"id", "values": [...]}], "defaults"?: {id: value}} whose variants (every
                                 combination, flat ids <id>-<values>) reach AvailableModels, GetUsableModels and
                                 GET /v1/models alike; a base id of the built-in catalogue is replaced
  --record <dir>                 Write every Run's client and server messages to <dir>/<run id>-….jsonl, one JSON
                                 line per message: {at, from: client|server, type, message} (protobuf JSON of
                                 agent.v1.AgentClientMessage / AgentServerMessage); a failed Run ends with
                                 {at, from: server, error: {code, message}}
  --log-level <level>            debug | info | warn | error (default info; debug also says what a stalled turn
                                 waits for)

GET /emulator/stats (loopback only) answers JSON: runs (Run + RunSSE calls started), runStreams, runSseStreams,
bidiAppends, webSearches, webFetches, exchangeCalls, oauthTokenCalls, usableModelsCalls, availableModelsCalls and
turns, one entry per turn (runId, headers, conversationId, transport, model, requestBytes, getBlobRequests,
outcome, …); GET /emulator/runs/<run id> answers one of them (the Run's x-request-id, for RunSSE the bidi
request id).

${describeEmulatorDirectives()}
Examples:
  cursor-bridge emulator --port 8766
  CURSOR_API_URL=http://127.0.0.1:8766 CURSOR_WEBSITE_URL=http://127.0.0.1:8766 cursor-bridge login --no-browser

  # log in with an API key instead of the browser
  cursor-bridge emulator --port 8766 --api-key test-key
  CURSOR_API_URL=http://127.0.0.1:8766 CURSOR_API_KEY=test-key cursor-bridge login --api-key
`;

function intOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new ProxyError("invalid_request", `--${name} must be a whole number ≥ 0.`);
  return n;
}

/** `--min-client-version`: a `cli-YYYY.MM.DD-<7 hex>` version. */
function minClientVersionOf(value: string | undefined): { minClientVersion?: string } {
  if (value === undefined) return {};
  if (!/^cli-\d{4}\.\d{2}\.\d{2}-[0-9a-f]{7}$/.test(value)) {
    throw new ProxyError("invalid_request", "--min-client-version must look like cli-2026.10.01-e373342.");
  }
  return { minClientVersion: value };
}

/** `--http2-config`: one of the hint values the emulator can send. */
function http2ConfigOf(value: string | undefined): { http2Config?: EmulatorHttp2Config } {
  if (value === undefined) return {};
  const known = EMULATOR_HTTP2_CONFIGS.find((name) => name === value);
  if (known === undefined) {
    throw new ProxyError("invalid_request", `--http2-config must be one of ${EMULATOR_HTTP2_CONFIGS.join(", ")}.`);
  }
  return { http2Config: known };
}

/** `--max-concurrent-streams`: a whole number ≥ 1, absent = unlimited. */
function maxStreamsOf(value: string | undefined): { maxConcurrentStreams?: number } {
  if (value === undefined) return {};
  const n = intOption(value, "max-concurrent-streams", 0);
  if (n < 1) throw new ProxyError("invalid_request", "--max-concurrent-streams must be a whole number ≥ 1.");
  return { maxConcurrentStreams: n };
}

/** Keys from repeated --api-key and the comma-separated environment variable; an empty key is an error. */
function apiKeysOf(flags: readonly string[] | undefined, env: string | undefined): string[] {
  const keys = [...(flags ?? []), ...(env === undefined || env === "" ? [] : env.split(","))].map((k) => k.trim());
  if (keys.some((key) => key === "")) {
    throw new ProxyError("invalid_request", "--api-key (or CURSOR_BRIDGE_EMULATOR_API_KEYS) holds an empty key.");
  }
  return keys;
}

/** A port that cannot be bound, said as `serve` says it (exit 2), instead of Node's raw `listen EADDRINUSE`. */
function portProblem(error: unknown, host: string, port: number): ProxyError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "EADDRINUSE") {
    return new ProxyError("invalid_request", `Port ${port} on ${host} is already in use. Pick another with --port.`, {
      cause: error,
    });
  }
  if (code === "EACCES" || code === "EADDRNOTAVAIL") {
    return new ProxyError("invalid_request", `Cannot listen on ${host}:${port} (${code}). Pick another with --port.`, {
      cause: error,
    });
  }
  return undefined;
}

/** The emulator command's options (parseArgs declarations). */
const EMULATOR_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  "bootstrap-latency-ms": { type: "string" },
  "tokens-per-second": { type: "string" },
  "log-level": { type: "string" },
  "api-key": { type: "string", multiple: true },
  models: { type: "string" },
  record: { type: "string" },
  catalogue: { type: "string" },
  "no-tool-call-count": { type: "boolean" },
  "max-concurrent-streams": { type: "string" },
  "min-client-version": { type: "string" },
  "http2-config": { type: "string" },
} satisfies NonNullable<ParseArgsConfig["options"]>;

/** `cursor-bridge emulator`. */
export const emulatorCommand: Command = {
  name: "emulator",
  summary: "Run the Cursor backend emulator alone (the upstream of every test and benchmark)",
  help: HELP,
  options: EMULATOR_OPTIONS,
  async run(argv, io) {
    let values: Record<string, string | boolean | string[] | undefined>;
    try {
      ({ values } = parseArgs({
        args: argv,
        strict: true,
        options: EMULATOR_OPTIONS,
      }));
    } catch (error) {
      throw new ProxyError("invalid_request", parseErrorMessage("emulator", error, argv, EMULATOR_OPTIONS), {
        cause: error,
      });
    }
    const host = typeof values.host === "string" ? values.host : "127.0.0.1";
    if (!isLoopbackHost(host)) {
      throw new ProxyError(
        "invalid_request",
        "The emulator only binds loopback addresses (127.0.0.1, ::1, localhost).",
      );
    }
    const level = values["log-level"] ?? "info";
    if (level !== "debug" && level !== "info" && level !== "warn" && level !== "error") {
      throw new ProxyError("invalid_request", "--log-level must be debug, info, warn or error.");
    }
    const logger = createLogger({
      level,
      sink: (line) => io.err(`${line}\n`),
    });
    // Loaded on use: the emulator is code that only this command and a server without Cursor credentials run.
    const { startEmulator, parseModelsFile, parseCatalogueFile } = await import("../emulator/index.js");
    const modelsFile = values.models as string | undefined;
    let extraModelIds: string[] = [];
    if (modelsFile !== undefined) {
      try {
        extraModelIds = parseModelsFile(await readFile(modelsFile, "utf8"));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ProxyError("invalid_request", `--models ${modelsFile}: ${reason}`);
      }
    }
    const catalogueFile = values.catalogue as string | undefined;
    let extraBaseModels: ReturnType<typeof parseCatalogueFile>["bases"] = [];
    if (catalogueFile !== undefined) {
      try {
        const parsed = parseCatalogueFile(await readFile(catalogueFile, "utf8"));
        extraModelIds = [...extraModelIds, ...parsed.ids];
        extraBaseModels = parsed.bases;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ProxyError("invalid_request", `--catalogue ${catalogueFile}: ${reason}`);
      }
    }
    const recordDir = values.record as string | undefined;
    if (recordDir === "") throw new ProxyError("invalid_request", "--record needs a directory.");
    const port = intOption(values.port as string | undefined, "port", DEFAULT_EMULATOR_PORT);
    const emulator = await startEmulator({
      extraModelIds,
      extraBaseModels,
      ...(recordDir === undefined ? {} : { recordDir }),
      host,
      port,
      bootstrapLatencyMs: intOption(values["bootstrap-latency-ms"] as string | undefined, "bootstrap-latency-ms", 0),
      tokensPerSecond: intOption(values["tokens-per-second"] as string | undefined, "tokens-per-second", 0),
      toolCallCount: values["no-tool-call-count"] !== true,
      ...minClientVersionOf(values["min-client-version"] as string | undefined),
      ...http2ConfigOf(values["http2-config"] as string | undefined),
      ...maxStreamsOf(values["max-concurrent-streams"] as string | undefined),
      apiKeys: apiKeysOf(values["api-key"] as string[] | undefined, io.env.CURSOR_BRIDGE_EMULATOR_API_KEYS),
      logger,
    }).catch((error: unknown) => {
      throw portProblem(error, host, port) ?? error;
    });
    io.out(`Cursor backend emulator listening on ${emulator.url} (HTTP/2 cleartext and HTTP/1.1)\n`);
    releaseYoungGeneration();
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    await emulator.close();
    return EXIT.ok;
  },
};
