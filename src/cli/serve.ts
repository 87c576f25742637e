/**
 * `cursor-bridge serve` (and `npm start`): the OpenAI-compatible server. Without Cursor credentials it serves the
 * embedded emulator and says so loudly (banner, /health, owned_by).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { bodyLimitForImages } from "../bridge/image-input.js";
import { assertSafeBinding } from "../config/host.js";
import { describeConfig } from "../config/index.js";
import { createEngine } from "../engine/index.js";
import { createApp } from "../server/app.js";
import { listen, type RunningServer } from "../server/listen.js";
import { ProxyError } from "../util/errors.js";
import { createLogger, type Logger } from "../util/logger.js";
import { PARENT_IPC_ENV, PARENT_IPC_STDIO } from "../util/parent-ipc.js";
import { releaseYoungGeneration } from "../util/young-generation.js";
import { parseCommandLine } from "./args.js";
import { type Command, EXIT } from "./command.js";
import { createCliContext } from "./context.js";
import type { CliIo } from "./io.js";
import { createParentLink, type ParentLink } from "./parent-link.js";
import { withSharedLogin } from "./shared-login.js";
import { connectSharedStore, openStores, type ServeStores } from "./store-setup.js";
import { createUpstream, type Upstream } from "./upstream.js";
import { planUsageOf } from "./usage.js";
import { packageVersion } from "./version.js";

function settingsHelp(): string {
  const rows = describeConfig().filter((row) => row.flag !== undefined || row.env !== undefined);
  const left = rows.map((row) => (row.flag ? `${row.flag} <value>` : `(env only)`));
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

Runs the OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models, GET /health), and a status page at /.
Upstream: Cursor when you are logged in (cursor-bridge login), otherwise the built-in Cursor emulator.

Options (flags > environment > config file > defaults):
${settingsHelp()}
  --json  Print the startup line as JSON

Examples:
  cursor-bridge serve
  cursor-bridge serve --port 9000 --upstream emulator
  CURSOR_BRIDGE_API_KEY=secret cursor-bridge serve --host 0.0.0.0 --allowed-hosts my-box.lan
  cursor-bridge serve --allowed-origins http://localhost:3000   # a browser app you run yourself
`;

/** Where other instances reach this one when `--instance-url` is not given. */
function defaultInstanceUrl(host: string, port: number): string {
  const name = ["0.0.0.0", "::", "[::]"].includes(host) ? hostname() : host;
  return `http://${name.includes(":") && !name.startsWith("[") ? `[${name}]` : name}:${port}`;
}

/** A started bridge: HTTP server + upstream. */
export interface RunningBridge {
  server: RunningServer;
  upstream: Upstream;
  close(): Promise<void>;
}

function banner(server: RunningServer, upstream: Upstream, apiKey: boolean): string {
  const base = `${server.url}/v1`;
  const lines = [`cursor-bridge ${packageVersion()} listening on ${base}`];
  if (upstream.kind === "emulator") {
    const bar = "!".repeat(78);
    lines.push(
      bar,
      "!! UPSTREAM: CURSOR EMULATOR — not your Cursor account. Answers are scripted (see README).",
      "!! Run `cursor-bridge login`, then restart, to use Cursor's real models.",
      `!! Emulator at ${upstream.agentUrl}`,
      bar,
    );
  } else {
    lines.push(`Upstream: Cursor at ${upstream.agentUrl}${upstream.account ? ` as ${upstream.account}` : ""}`);
  }
  lines.push(apiKey ? "Clients must send the configured API key." : "No API key required (loopback only).");
  lines.push(`Status page: ${server.url}/ · client configs: \`cursor-bridge setup <client>\``);
  return `${lines.join("\n")}\n`;
}

/** Starts the server from a command line; used by the `serve` command and by tests. */
export async function startBridge(
  io: CliIo,
  argv: string[],
  parent?: ParentLink,
): Promise<{ bridge: RunningBridge; json: boolean; logger: Logger }> {
  const { flags } = parseCommandLine("serve", argv);
  const ctx = await createCliContext(io, flags, parent === undefined ? {} : { parentTokenSource: parent.tokenSource });
  const { config } = ctx;
  assertSafeBinding(config);
  const logger = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    sink: (line) => io.err(`${line}\n`),
  });
  const engineLogger = logger.child({ component: "engine" });
  // With --store redis://… the instances share one connection's worth of state, the Cursor login included.
  const shared = await connectSharedStore(config, engineLogger);
  // The stores are opened once the upstream's kind is known (the emulator's data is kept apart from Cursor's).
  let opened: ServeStores | undefined;
  let upstream: Upstream;
  try {
    upstream = await createUpstream(
      shared === undefined ? ctx : withSharedLogin(ctx, shared, logger),
      logger,
      async (kind, dataDir) => {
        opened = await openStores(config, dataDir, kind, engineLogger, shared);
        return { conversationStore: opened.conversationStore, toolCallIdSuffix: opened.cluster?.toolCallIdSuffix };
      },
    );
  } catch (error) {
    await shared?.close();
    throw error;
  }
  const stores = opened;
  if (stores === undefined) {
    await upstream.close();
    await shared?.close();
    throw new ProxyError("internal", "The upstream did not open its stores.");
  }
  const engine = createEngine({
    agentClient: upstream.agentClient,
    index: stores.index,
    logger: engineLogger,
    parkedTurnTtlMs: config.parkedTurnTtlMs,
    maxParkedTurns: config.maxParkedTurns,
    ...(stores.client === undefined ? {} : { storeReady: stores.client.assertReady }),
    ...(stores.cluster === undefined ? {} : { forwarder: stores.cluster.forwarder }),
  });
  const cluster = stores.cluster;
  const instanceUrl = cluster === undefined ? undefined : config.instanceUrl;
  const wildcard = ["0.0.0.0", "::", "[::]"].includes(config.host);
  // Other instances forward tool results to this one under the name its instance URL gives.
  const instanceHost =
    cluster === undefined
      ? undefined
      : instanceUrl !== undefined
        ? new URL(instanceUrl).hostname
        : wildcard
          ? hostname()
          : config.host;
  // Stored /v1/responses (store: true), next to the conversations; expired ones are removed at startup.
  const { responseStore } = stores;
  responseStore
    .deleteExpired()
    .catch((error: unknown) => engineLogger.warn("Could not remove expired stored responses", { error }));
  const app = createApp({
    engine,
    responseStore,
    logger: logger.child({ component: "http" }),
    options: {
      apiKey: config.apiKey,
      anthropicModels: config.anthropicModels,
      corsOrigins: config.corsOrigins,
      // The bound address is a name clients use; a wildcard address is not (browsers send pages' requests to 0.0.0.0).
      allowedHosts: [
        ...(wildcard ? config.allowedHosts : [...config.allowedHosts, config.host]),
        ...(instanceHost === undefined ? [] : [instanceHost]),
      ],
      allowedOrigins: config.allowedOrigins,
      maxBodyBytes: bodyLimitForImages(config.maxBodyBytes, config.maxImageBytes),
      maxImageBytes: config.maxImageBytes,
      reasoningOutput: config.reasoningOutput,
      upstream: upstream.kind,
      loggedIn: upstream.loggedIn,
      version: packageVersion(),
    },
    now: Date.now,
    newId: () => randomUUID().replaceAll("-", ""),
    status: {
      account: upstream.account,
      upstreamUrl: upstream.agentUrl,
      usage: async (signal) => planUsageOf(await upstream.api.getCurrentPeriodUsage(signal)),
    },
    ...(cluster === undefined ? {} : { cluster: { auth: cluster.auth, signingKey: cluster.signingKey } }),
  });
  let server: RunningServer | undefined;
  try {
    server = await listen(app, {
      host: config.host,
      port: config.port,
      apiKey: config.apiKey,
      bodyTimeoutMs: config.bodyTimeoutMs,
    });
    if (cluster !== undefined) {
      const url = instanceUrl ?? defaultInstanceUrl(config.host, server.port);
      await cluster.directory.register({ tag: cluster.tag, url, startedAt: Date.now() });
      logger.info("joined the instances sharing the store", { instance: cluster.tag, url });
    }
  } catch (error) {
    await server?.close();
    await engine.closeAll();
    await stores.close();
    await upstream.close();
    throw error;
  }
  const close = async () => {
    await server.close();
    await engine.closeAll();
    await stores.close();
    await upstream.close();
  };
  if (flags.json) {
    io.out(`${JSON.stringify({ url: `${server.url}/v1`, upstream: upstream.kind, upstreamUrl: upstream.agentUrl })}\n`);
  } else {
    io.out(banner(server, upstream, config.apiKey !== undefined));
  }
  return { bridge: { server, upstream, close }, json: flags.json, logger };
}

/** `cursor-bridge serve`. */
export const serveCommand: Command = {
  name: "serve",
  summary: "Run the OpenAI-compatible server (Cursor upstream, or the emulator until you log in)",
  help: HELP,
  async run(argv, io) {
    // Started by the OpenCode plugin: tokens come from it over stdio, and its exit ends this process.
    const parent =
      io.env[PARENT_IPC_ENV] === PARENT_IPC_STDIO
        ? createParentLink({ input: process.stdin, output: process.stdout })
        : undefined;
    const { bridge, logger } = await startBridge(io, argv, parent);
    releaseYoungGeneration();
    const parentGone = await new Promise<boolean>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        logger.info(`received ${signal}, shutting down`);
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve(false);
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
      parent?.parentGone.then(() => resolve(true));
    });
    if (parent !== undefined) {
      // The plugin stopped us or its OpenCode is gone: nobody will use this server again, and OpenCode expects it
      // gone within a second. Close briefly (open keep-alive connections must not hold it), then exit regardless.
      parent.close();
      if (parentGone) logger.info("the OpenCode process that started this bridge exited, shutting down");
      await Promise.race([bridge.close(), new Promise((resolve) => setTimeout(resolve, 300).unref())]);
      process.exit(EXIT.ok);
    }
    await bridge.close();
    return EXIT.ok;
  },
};
