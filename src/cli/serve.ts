/**
 * `cursor-bridge serve` (and `npm start`): the OpenAI-compatible server. Without Cursor credentials it serves the
 * embedded emulator and says so loudly (banner, /health, owned_by).
 *
 * The start is ordered to print the listening line early without ever misleading: the configuration, the security
 * checks and the upstream choice come first (each may refuse to start), then the port is bound (the emulator's too,
 * so the banner can name it) and the banner printed; only then does serve-runtime.ts load the protocol code, the
 * emulator, the stores and the app. Requests that arrive meanwhile are held, not refused, and served once the API
 * serves, through the same checks as any other (server/listen.ts); `/health` is held too, so it answers 200 only
 * once the API serves.
 */
import { createHash } from "node:crypto";
import { assertSafeBinding } from "../config/host.js";
import type { BridgeConfig } from "../config/index.js";
import { describeConfig, SETTINGS } from "../config/index.js";
import { createIdleMemory } from "../server/idle-memory.js";
import { bind, type PendingServer, type RunningServer } from "../server/listen.js";
import type { StoreClient } from "../stores/redis/client.js";
import type { UpstreamKind } from "../surfaces/kit/deps.js";
import { ProxyError } from "../util/errors.js";
import { createLogger, type Logger, redactText } from "../util/logger.js";
import { PARENT_IPC_ENV, PARENT_IPC_STDIO } from "../util/parent-ipc.js";
import { type ReservedListener, reserveListener } from "../util/reserved-listener.js";
import { releaseYoungGeneration } from "../util/young-generation.js";
import { parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { type CliContext, createCliContext } from "./context.js";
import { type DataDirLock, lockDataDir, prepareDataDir } from "./data-dir.js";
import { loginOf } from "./format.js";
import type { CliIo } from "./io.js";
import { createParentLink, type ParentLink } from "./parent-link.js";
import { reachableOrigin, servingBridgeVersion, writeRuntimeFile } from "./runtime-file.js";
import type { ServedUpstream } from "./serve-runtime.js";
import { chooseUpstream, type UpstreamChoice } from "./upstream-choice.js";
import { packageVersion } from "./version.js";

function settingsHelp(): string {
  const rows = describeConfig();
  const left = rows.map((row) => {
    if (row.flag !== undefined) return `${row.flag} <value>`;
    return row.env !== undefined ? "(env only)" : `${row.name} (config file only)`;
  });
  const width = Math.max(...left.map((l) => l.length));
  return rows
    .map((row, i) => {
      const env = row.env ? `  [env ${row.env}]` : "";
      return `  ${left[i]?.padEnd(width)}  ${row.description} (default: ${row.default})${env}`;
    })
    .join("\n");
}

const HELP = `Usage: cursor-bridge serve [options]
       npm start -- [options]

Runs the OpenAI- and Anthropic-compatible API (POST /v1/chat/completions, POST /v1/responses, POST /v1/messages,
GET /v1/models, GET /health), a status page at /, Prometheus metrics at /metrics and, with --admin-key, the admin
API under /admin.
Upstream: Cursor when you are logged in (cursor-bridge login), otherwise the built-in Cursor emulator.

Options (flags > environment > config file > defaults):
${settingsHelp()}
  --json  Print the startup line as JSON

Stopping: SIGTERM or Ctrl-C refuses new requests at once and lets those in flight finish for up to
--drain-timeout-ms; streams still open then end with a shutting-down error event, which gets 2 s more to be sent.
A second signal exits at once. The default (7 s) fits docker stop's 10 s grace; a longer --drain-timeout-ms needs a
stop grace at least 3 s longer than it (docker --stop-timeout, compose stop_grace_period, Kubernetes'
terminationGracePeriodSeconds), or SIGKILL cuts the streams without their error and leaves serve.lock behind.

Examples:
  cursor-bridge serve
  cursor-bridge serve --port 9000 --upstream emulator
  CURSOR_BRIDGE_API_KEY=secret cursor-bridge serve --host 0.0.0.0 --allowed-hosts my-box.lan
  cursor-bridge serve --allowed-origins http://localhost:3000   # a browser app you run yourself
`;

/** The admin key must not also be the clients' key (whoever uses the API could then manage its keys). */
function assertDistinctKeys(config: Pick<BridgeConfig, "apiKey" | "adminKey">): void {
  if (config.apiKey === undefined || config.adminKey === undefined) return;
  const sha = (text: string) => createHash("sha256").update(text).digest("hex");
  const admin = config.adminKey.match(/^sha256:([0-9a-f]{64})$/i)?.[1]?.toLowerCase() ?? sha(config.adminKey);
  if (admin !== sha(config.apiKey)) return;
  throw new ProxyError(
    "invalid_request",
    "--admin-key must differ from --api-key (clients must not be able to manage keys).",
    {
      param: "adminKey",
      detail: "invalid_config",
    },
  );
}

/** A started bridge: HTTP server + upstream. */
export interface RunningBridge {
  server: RunningServer;
  upstream: ServedUpstream;
  /**
   * Resolves once the upstream is built (the server answers before: turns wait for it); rejects when it cannot be
   * (the server must then stop).
   */
  ready: Promise<void>;
  /** Reads Cursor's server config now, as the timer does (serve-runtime.ts's `readServerConfig`). */
  readServerConfig(): Promise<void>;
  /** Stops the bridge; with `drainMs`, gracefully (see serve-runtime.ts's `close`). */
  close(drainMs?: number): Promise<void>;
}

/** What the banner says about the upstream (known before it is built). */
interface AnnouncedUpstream {
  kind: UpstreamKind;
  agentUrl: string;
  account: string | undefined;
  /** The other named accounts served (issue #29). */
  named: readonly string[];
  /** The emulator was asked for (`--upstream emulator`), not fallen back to for want of a login. */
  chosen: boolean;
}

function banner(url: string, upstream: AnnouncedUpstream, adminKey = false): string {
  const base = `${url}/v1`;
  const lines = [`cursor-bridge ${packageVersion()} listening on ${base}`];
  if (upstream.kind === "emulator") {
    const bar = "!".repeat(78);
    lines.push(
      bar,
      // Not docs/emulator.md: an installed package ships no docs/, and the help lists the directives too.
      "!! UPSTREAM: CURSOR EMULATOR — not your Cursor account. Answers are scripted (`cursor-bridge emulator --help`).",
      upstream.chosen
        ? "!! Chosen by --upstream emulator: start without it (after `cursor-bridge login`) for Cursor's real models."
        : "!! Run `cursor-bridge login`, then restart, to use Cursor's real models.",
      `!! Emulator at ${upstream.agentUrl}`,
      bar,
    );
  } else {
    lines.push(`Upstream: Cursor at ${upstream.agentUrl}${upstream.account ? ` as ${upstream.account}` : ""}`);
    if (upstream.named.length > 0) lines.push(`Named accounts also served: ${upstream.named.join(", ")}`);
  }
  if (adminKey) lines.push(`Admin API: ${url}/admin/keys (Authorization: Bearer <admin key>)`);
  lines.push(`Status page: ${url}/ · client configs: \`cursor-bridge setup <client>\``);
  return `${lines.join("\n")}\n`;
}

/**
 * The one rule for keys, stated once the stores have said whether virtual keys exist (the banner goes out before, so
 * that a start is fast: it names no rule it cannot know yet).
 */
export function keyRule(apiKey: boolean, virtualKeys: boolean): string {
  if (virtualKeys) {
    return apiKey
      ? "Keys: every API request needs a virtual key (`cursor-bridge keys list`) or the configured API key."
      : "Keys: every API request needs a virtual key (`cursor-bridge keys list`).";
  }
  return apiKey ? "Clients must send the configured API key." : "No API key required (loopback only).";
}

/** The upstream as the banner names it; the emulator's URL is that of the port bound for it. */
function announced(choice: UpstreamChoice, ctx: CliContext, listener: ReservedListener | undefined): AnnouncedUpstream {
  if (choice.kind === "cursor") {
    const { status } = choice.credentials;
    return {
      kind: "cursor",
      agentUrl: ctx.config.cursorAgentUrl,
      account: loginOf(status),
      named: (choice.named ?? []).map((login) => login.name),
      chosen: false,
    };
  }
  return {
    kind: "emulator",
    agentUrl: `http://127.0.0.1:${listener?.port}`,
    account: undefined,
    named: [],
    chosen: ctx.config.upstream === "emulator",
  };
}

/** A taken port names the cursor-bridge already serving there, when it is one. */
async function explainPortInUse(error: unknown, host: string, port: number): Promise<unknown> {
  const cause = error instanceof ProxyError ? (error.cause as NodeJS.ErrnoException | undefined) : undefined;
  if (cause?.code !== "EADDRINUSE") return error;
  const version = await servingBridgeVersion(host, port);
  if (version === undefined) return error;
  return new ProxyError(
    "invalid_request",
    `Port ${port} on ${host} is already in use by cursor-bridge ${version} (${reachableOrigin(host, port)}/): use that one (\`cursor-bridge setup <client>\` finds it), stop it, or pick another port with --port.`,
    { cause: error },
  );
}

/**
 * A secret given as a flag (`--api-key`, `--admin-key`, `--cluster-secret`) stands in the process's command line,
 * which every user of the machine can read (`ps`, /proc/<pid>/cmdline): says so, and which variable to use instead.
 */
export function warnSecretFlags(given: Readonly<Record<string, unknown>>, logger: Logger): void {
  for (const setting of SETTINGS) {
    if (!setting.secret || setting.flag === undefined || given[setting.name] === undefined) continue;
    const instead = setting.env === undefined ? "" : `; set ${setting.env} instead`;
    logger.warn(`${setting.flag} on the command line is visible to every user of this machine (ps)${instead}`);
  }
}

/**
 * Starts the server from a command line; used by the `serve` command and by tests. Resolves once the API serves;
 * `onListening` gets the server's URL when the banner has been printed (requests sent from then on are held until
 * the API serves, then served).
 */
export async function startBridge(
  io: CliIo,
  argv: string[],
  parent?: ParentLink,
  onListening?: (url: string) => void,
): Promise<{ bridge: RunningBridge; json: boolean; logger: Logger; drainMs: number }> {
  const { flags } = parseCommandLine("serve", argv);
  const ctx = await createCliContext(io, flags, parent === undefined ? {} : { parentTokenSource: parent.tokenSource });
  const { config } = ctx;
  assertSafeBinding(config);
  assertDistinctKeys(config);
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    sink: (line) => io.err(`${line}\n`),
    // No pattern knows these: a client that sends its key as the model, or a key pasted into a path, is logged.
    secrets: [
      config.apiKey,
      config.adminKey?.startsWith("sha256:") === true ? undefined : config.adminKey,
      config.clusterSecret,
    ],
  });
  warnSecretFlags(flags.config, logger);
  // The file stores' directory must be usable: checked before the port is bound, so a bad --data-dir is said before
  // any "listening" line (data-dir.ts).
  if (config.store === "file") prepareDataDir(config.dataDir, logger);
  // With --store redis://… (the configuration accepts `file` or a Redis URL) the instances share one connection's
  // worth of state, the Cursor login included; the cluster code loads only then.
  const shared: StoreClient | undefined =
    config.store === "file"
      ? undefined
      : await (await import("./store-setup.js")).connectSharedStore(config, logger.child({ component: "engine" }));
  let listener: ReservedListener | undefined;
  let server: PendingServer;
  let choice: UpstreamChoice;
  let upstreamCtx = ctx;
  try {
    if (shared !== undefined) upstreamCtx = (await import("./shared-login.js")).withSharedLogin(ctx, shared, logger);
    // Named accounts serve a team's keys; a plugin's private child serves its one parent's login only.
    choice = await chooseUpstream(upstreamCtx, { accounts: parent === undefined });
    if (choice.kind === "emulator") {
      if (config.emulator.port !== 0 && config.emulator.port === config.port) {
        throw new ProxyError(
          "invalid_request",
          `--port and --emulator-port are both ${config.port}: the server and the embedded emulator it serves need two ports. Pick another for one of them (--emulator-port 0 = any free port).`,
        );
      }
      listener = await reserveListener("127.0.0.1", config.emulator.port).catch((error: NodeJS.ErrnoException) => {
        const why = error.code === "EADDRINUSE" ? "is already in use" : `cannot be bound (${error.code ?? "error"})`;
        throw new ProxyError(
          "invalid_request",
          `The embedded emulator's port ${config.emulator.port} on 127.0.0.1 ${why}: pick another with --emulator-port (0 = any free port).`,
          { cause: error },
        );
      });
      choice = { kind: "emulator", listener };
    }
    server = await bind({
      host: config.host,
      port: config.port,
      apiKey: config.apiKey,
      bodyTimeoutMs: config.bodyTimeoutMs,
      idleMemory: createIdleMemory({ logger }),
    });
  } catch (error) {
    await listener?.close();
    await shared?.close();
    throw await explainPortInUse(error, config.host, config.port);
  }
  // The data directory is this server's alone (data-dir.ts), claimed once bound (a second `serve` on the same port is
  // told about the port first) and before the banner. A plugin's private child takes no lock: several OpenCode windows
  // each start one on the user's data directory, beside the user's own `serve`, as `acp` processes do.
  let lock: DataDirLock | undefined;
  if (config.store === "file" && parent === undefined) {
    try {
      lock = await lockDataDir(config.dataDir, { host: config.host, port: server.port }, ctx.now);
    } catch (error) {
      await server.close();
      await listener?.close();
      throw error;
    }
  }
  const upstream = announced(choice, ctx, listener);
  if (flags.json) {
    io.out(`${JSON.stringify({ url: `${server.url}/v1`, upstream: upstream.kind, upstreamUrl: upstream.agentUrl })}\n`);
  } else {
    io.out(banner(server.url, upstream, config.adminKey !== undefined));
  }
  if (upstream.kind === "emulator" && config.logFormat === "json") {
    // The banner is on stdout, where a JSON log collector does not look: the log says it too (as `acp` does).
    logger.warn(
      upstream.chosen
        ? "UPSTREAM: CURSOR EMULATOR (--upstream emulator), not your Cursor account"
        : "UPSTREAM: CURSOR EMULATOR, not your Cursor account; run `cursor-bridge login` and restart for real models",
      { emulator: upstream.agentUrl },
    );
  }
  onListening?.(server.url);
  try {
    const { startRuntime } = await import("./serve-runtime.js");
    const runtime = await startRuntime({ ctx: upstreamCtx, logger, shared, choice, server });
    if (!flags.json) io.out(`${keyRule(config.apiKey !== undefined, runtime.virtualKeys)}\n`);
    // Where this server listens, for `setup` and `doctor` (not for a plugin's private child: nobody else uses it).
    const forget =
      parent === undefined
        ? writeRuntimeFile(config.dataDir, {
            pid: process.pid,
            host: config.host,
            port: Number(new URL(server.url).port),
            url: server.url,
            version: packageVersion(),
            startedAt: new Date(ctx.now()).toISOString(),
          })
        : () => {};
    const close = async (drainMs?: number) => {
      forget();
      await runtime.close(drainMs);
      lock?.release();
    };
    return {
      bridge: {
        server,
        upstream: runtime.upstream,
        ready: runtime.ready,
        readServerConfig: runtime.readServerConfig,
        close,
      },
      json: flags.json,
      logger,
      drainMs: config.drainTimeoutMs,
    };
  } catch (error) {
    // Sent to whoever asked meanwhile: redacted like every message the server writes.
    const message = redactText(ProxyError.from(error).message);
    await server.fail(`cursor-bridge could not start: ${message}`);
    await listener?.close();
    lock?.release();
    throw error;
  }
}

/** `cursor-bridge serve`. */
export const serveCommand: Command = {
  name: "serve",
  summary: "Run the OpenAI-compatible server (Cursor upstream, or the emulator until you log in)",
  help: HELP,
  options: {},
  async run(argv, io) {
    // Started by the OpenCode plugin: tokens come from it over stdio, and its exit ends this process.
    const parent =
      io.env[PARENT_IPC_ENV] === PARENT_IPC_STDIO
        ? createParentLink({ input: process.stdin, output: process.stdout })
        : undefined;
    // Listened for from the banner on: a signal while the API still loads stops the server once it is up. The first
    // signal stops it gracefully (the requests in flight may finish, up to --drain-timeout-ms); a second one ends the
    // process at once, with the shell's code for a process killed by that signal.
    let signalled: NodeJS.Signals | undefined;
    let log: Logger | undefined;
    const stopNow = (signal: NodeJS.Signals) => {
      const message = `received ${signal} again: exiting now, without waiting for the requests in flight`;
      if (log === undefined) io.err(`${message}\n`);
      else log.warn(message);
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    };
    let stopListening = () => {};
    let stopped: Promise<boolean> = new Promise(() => {});
    const onListening = () => {
      // What the start allocates from here on (the API's code, the upstream's) no longer waits for the first answer
      // with the young generation held: with it held, its scavenges and the mark-compact they bring on came before
      // the answer (docs/performance.md, the start).
      releaseYoungGeneration();
      stopped = new Promise<boolean>((resolve) => {
        const stop = (signal: NodeJS.Signals) => {
          signalled = signal;
          stopListening();
          process.once("SIGINT", stopNow);
          process.once("SIGTERM", stopNow);
          resolve(false);
        };
        stopListening = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
        parent?.parentGone.then(() => resolve(true));
      });
    };
    let started: Awaited<ReturnType<typeof startBridge>>;
    try {
      started = await startBridge(io, argv, parent, onListening);
    } catch (error) {
      stopListening();
      throw error;
    }
    const { bridge, logger, drainMs } = started;
    log = logger;
    // Stops the server when the upstream cannot be built after all (it serves before, turns wait for it).
    let failure: unknown;
    const failed = bridge.ready.then(
      () => new Promise<boolean>(() => {}),
      (error: unknown) => {
        failure = error;
        return false;
      },
    );
    const parentGone = await Promise.race([stopped, failed]);
    if (failure !== undefined) {
      stopListening();
      await bridge.close();
      throw failure;
    }
    if (signalled !== undefined) logger.info(`received ${signalled}, shutting down`);
    if (parent !== undefined) {
      // The plugin stopped us or its OpenCode is gone: nobody will use this server again, and OpenCode expects it
      // gone within a second. Close briefly (open keep-alive connections must not hold it), then exit regardless.
      parent.close();
      if (parentGone) logger.info("the OpenCode process that started this bridge exited, shutting down");
      await Promise.race([bridge.close(), new Promise((resolve) => setTimeout(resolve, 300).unref())]);
      process.exit(EXIT.ok);
    }
    await bridge.close(drainMs);
    logger.info("stopped");
    return EXIT.ok;
  },
};
