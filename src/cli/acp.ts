/**
 * `cursor-bridge acp`: the Agent Client Protocol agent on stdin/stdout for Zed, JetBrains, Neovim and other ACP
 * editors. Same credentials and settings as `serve` (stored login, CURSOR_API_KEY, CURSOR_API_URL, config file,
 * `--store`); logs go to stderr only, since stdout carries the protocol. The engine, the upstream and the stores are
 * built on first use, and rebuilt after an `authenticate` that changed the login.
 */
import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import type { AuthMethod } from "@agentclientprotocol/sdk";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { wireEngine } from "../server/wiring.js";
import type { StoreClient } from "../stores/redis/client.js";
import type { AcpAuth, AcpStack } from "../surfaces/acp/agent.js";
import { createAcpAgent } from "../surfaces/acp/agent.js";
import { limitLines, MAX_LINE_BYTES } from "../surfaces/acp/line-limit.js";
import { acpSessionStoreOver } from "../surfaces/acp/session-store.js";
import { ProxyError } from "../util/errors.js";
import { createLogger, type Logger } from "../util/logger.js";
import { COMMON_OPTIONS_HELP, type OptionSpec, parseCommandLine } from "./args.js";
import { openInBrowser } from "./browser.js";
import { type Command, EXIT } from "./command.js";
import { type CliContext, createCliContext } from "./context.js";
import type { CliIo } from "./io.js";
import { engineSettings, openStores } from "./store-setup.js";
import { createUpstream } from "./upstream.js";
import { chooseAcpUpstream } from "./upstream-choice.js";
import { planUsageOf } from "./usage.js";
import { packageVersion } from "./version.js";

const OPTIONS: OptionSpec = { model: { type: "string" } };

const HELP = `Usage: cursor-bridge acp [options]

Speaks the Agent Client Protocol (ACP) on stdin/stdout, for editors that host agents: Zed, JetBrains IDEs, Neovim
(CodeCompanion, avante.nvim). The editor starts it: \`cursor-bridge setup zed|jetbrains|neovim\` prints the entry for
its settings. Upstream: Cursor. Without a login, session/new answers ACP's auth-required error and the editor offers
the agent's logins (the stored one, the browser's, CURSOR_API_KEY); --upstream emulator runs on the built-in Cursor
emulator instead (scripted replies, no Cursor account). Logs go to stderr only.

Options:
  --model <id>     The model new sessions start on (default: default; an alias is kept as the id it names, a model
                   Cursor does not serve makes session/new fail naming the ones it does); the editor can switch to
                   any model Cursor lists
  Every setting of \`cursor-bridge serve --help\` (--upstream, --store, --log-level, --data-dir, ...) applies as there.

${COMMON_OPTIONS_HELP.split("\n")
  .filter((line) => !line.trimStart().startsWith("--json"))
  .join("\n")}

Examples:
  cursor-bridge setup zed --write     # Zed starts \`cursor-bridge acp\` from then on
  # a headless ACP client (acpx) on the built-in emulator, without a login
  acpx --agent "cursor-bridge acp --upstream emulator" --cwd . sessions new
`;

const AUTH_METHODS: AuthMethod[] = [
  { id: "cursor-login", name: "Stored cursor-bridge login", description: "The login `cursor-bridge login` saved" },
  { id: "cursor-browser", name: "Log in with the browser", description: "Cursor's browser login (PKCE)" },
  { id: "cursor-api-key", name: "Cursor API key", description: "The key in CURSOR_API_KEY" },
];

interface Built extends AcpStack {
  close(): Promise<void>;
}

/** Builds the upstream, stores and engine the way serve-runtime.ts does (server/wiring.ts), without the HTTP app. */
async function buildStack(ctx: CliContext, logger: Logger, shared: StoreClient | undefined): Promise<Built> {
  const { config } = ctx;
  const upstream = await createUpstream(ctx, logger, await chooseAcpUpstream(ctx));
  let stores: Awaited<ReturnType<typeof openStores>>;
  try {
    stores = await openStores(config, upstream.dataDir, upstream.kind, logger.child({ component: "engine" }), shared);
  } catch (error) {
    await upstream.close();
    throw error;
  }
  if (upstream.kind === "emulator") {
    logger.warn("UPSTREAM: CURSOR EMULATOR, not your Cursor account; run `cursor-bridge login` for real models");
  }
  const { engine } = wireEngine({
    api: upstream.api,
    tokenSource: upstream.tokenSource,
    stores: { conversations: stores.conversationStore, index: stores.index },
    logger,
    ...engineSettings(config, stores),
  });
  return {
    engine,
    sessions: acpSessionStoreOver(stores.responseStore),
    usage: async (signal) => planUsageOf(await upstream.api.getCurrentPeriodUsage(signal)),
    close: async () => {
      await engine.closeAll();
      await stores.close();
      await upstream.close();
    },
  };
}

/** The login flows of `cursor-bridge login`, with their output on stderr (stdout is the protocol). */
function authFor(ctx: CliContext, io: CliIo, settings: string[], onChange: () => void): AcpAuth {
  return {
    methods: AUTH_METHODS,
    async authenticate(methodId) {
      if (methodId === "cursor-login") {
        await ctx.requireCredentials();
        return;
      }
      const argv =
        methodId === "cursor-api-key" ? ["--api-key"] : methodId === "cursor-browser" ? ["--no-browser"] : undefined;
      if (argv === undefined) throw new ProxyError("invalid_request", `Unknown authentication method ${methodId}.`);
      // login would ask for the key at a prompt or on stdin, neither of which an editor's agent has.
      if (methodId === "cursor-api-key" && ctx.config.cursorApiKey === undefined) {
        throw new ProxyError(
          "unauthenticated",
          "No Cursor API key: set CURSOR_API_KEY in the agent's environment (the `env` of its entry in the " +
            "editor's settings) and restart the agent, or sign in with the browser login method.",
        );
      }
      // login's text goes to stderr (stdout is the protocol) and stdin is never read; the browser login's link is
      // opened here, since login only opens a browser from a terminal.
      let opened = methodId !== "cursor-browser";
      const quiet: CliIo = {
        out: (text) => {
          io.err(text);
          const url = /https?:\/\/\S+/.exec(text)?.[0];
          if (url !== undefined && !opened) {
            opened = true;
            void openInBrowser(url, { platform: process.platform, env: io.env });
          }
        },
        err: io.err,
        isTty: false,
        env: io.env,
      };
      const { loginCommand } = await import("./login.js");
      const code = await loginCommand.run([...argv, ...settings], quiet);
      if (code !== EXIT.ok) throw new ProxyError("unauthenticated", "The login did not complete.");
      onChange();
    },
  };
}

/** The command line without acp's own options: the settings (--cursor-api-url, --config…) a login run shares. */
function settingsArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--model") i++;
    else if (!arg.startsWith("--model=") && arg !== "--json") out.push(arg);
  }
  return out;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { flags, values } = parseCommandLine("acp", argv, OPTIONS);
  // Human text of the context (and of a login) goes to stderr: stdout carries ACP.
  const errIo: CliIo = { ...io, out: io.err };
  const ctx = await createCliContext(errIo, flags);
  const logger = createLogger({
    level: ctx.config.logLevel,
    format: ctx.config.logFormat,
    sink: (l) => io.err(`${l}\n`),
  });
  const shared =
    ctx.config.store === "file"
      ? undefined
      : await (await import("./store-setup.js")).connectSharedStore(ctx.config, logger);
  let built: Promise<Built> | undefined;
  const stack = () => {
    built ??= buildStack(ctx, logger, shared).catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
  const rebuild = () => {
    const old = built;
    built = undefined;
    void old?.then((b) => b.close()).catch(() => undefined);
  };
  const acp = createAcpAgent({
    stack,
    auth: authFor(ctx, io, settingsArgv(argv), rebuild),
    logger: logger.child({ component: "acp" }),
    version: packageVersion(),
    defaultModel: typeof values.model === "string" ? values.model : "default",
    newSessionId: randomUUID,
    now: Date.now,
  });
  // Lines over the limit are answered by the agent (line-limit.ts), so the SDK's own bound (a little higher) never
  // ends the connection.
  const input = limitLines(Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>, {
    onDropped: ({ id, bytes }) =>
      logger.warn("dropped a JSON-RPC message over the line limit", { id: id ?? null, bytes, limit: MAX_LINE_BYTES }),
  });
  const connection = acp.app.connect(
    ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, input, {
      maxMessageBytes: MAX_LINE_BYTES + 1024,
    }),
  );
  const stop = () => connection.close();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await connection.closed;
  process.off("SIGTERM", stop);
  process.off("SIGINT", stop);
  await acp.close();
  await (await built?.catch(() => undefined))?.close();
  await shared?.close();
  return EXIT.ok;
}

/** `cursor-bridge acp`. */
export const acpCommand: Command = {
  name: "acp",
  summary: "Run as an Agent Client Protocol agent on stdio (Zed, JetBrains, Neovim)",
  help: HELP,
  options: OPTIONS,
  run,
};
