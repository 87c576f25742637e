/**
 * Every cursor-bridge setting in one table: its check (checks.ts), flag, environment variable, default and description.
 * `loadConfig` resolves values from this table and `describeConfig()` prints it for `serve --help`, so the two can
 * never disagree.
 */

import { configDir, dataDir, type PathEnvironment } from "../util/paths.js";
import { arrayOf, type Check, either, httpUrl, matching, number, oneOf, optional, string } from "./checks.js";

/** Where the upstream Cursor backend comes from. */
export type UpstreamMode = "auto" | "cursor" | "emulator";
/** Transport to Cursor's agent API (docs/protocol.md §4.2 / §4.3). */
export type TransportMode = "auto" | "http2" | "http1";
/** How reasoning is exposed to OpenAI clients. */
export type ReasoningOutputMode = "reasoning_content" | "think-tags" | "none";

/** The resolved, frozen configuration. */
export interface BridgeConfig {
  /** Interface the server listens on. A non-loopback host requires `apiKey`. @default "127.0.0.1" */
  readonly host: string;
  /** TCP port; 0 picks a free port. @default 8765 */
  readonly port: number;
  /** Bearer key clients must send to the bridge. Environment or flag only, never the config file. @default none */
  readonly apiKey: string | undefined;
  /**
   * Key of the admin API under /admin (team gateway): the key itself or `sha256:<64 hex>` from a flag or the
   * environment, only the `sha256:` form in the config file. Without it /admin is not served. @default none
   */
  readonly adminKey: string | undefined;
  /** `auto` uses Cursor when logged in and the embedded emulator otherwise. @default "auto" */
  readonly upstream: UpstreamMode;
  /** Cursor API base URL, also serving `/auth/*` (§1.1). @default "https://api2.cursor.sh" */
  readonly cursorApiUrl: string;
  /** Base URL for `agent.v1.AgentService` RPCs (§1.1). @default the value of cursorApiUrl */
  readonly cursorAgentUrl: string;
  /** Website hosting the browser login page (§3.1). @default "https://cursor.com" */
  readonly cursorWebsiteUrl: string;
  /** `x-cursor-client-version` to send (§2.1). @default detected from installed cursor-agent versions */
  readonly clientVersion: string | undefined;
  /** @default "auto" (HTTP/2, falling back to HTTP/1.1 RunSSE + BidiAppend) */
  readonly transport: TransportMode;
  /**
   * Most streams on one HTTP/2 connection to Cursor (a parked turn holds one); another connection opens when every
   * one is full, or at Cursor's SETTINGS_MAX_CONCURRENT_STREAMS if lower (docs/protocol.md §4.2). @default 100
   */
  readonly upstreamStreamsPerConnection: number;
  /** @default "reasoning_content" */
  readonly reasoningOutput: ReasoningOutputMode;
  /** Largest accepted request body in bytes. @default 4194304 (4 MiB) */
  readonly maxBodyBytes: number;
  /** Total decoded image bytes per request; the body limit is raised by their base64 size. @default 15728640 */
  readonly maxImageBytes: number;
  /** How long a turn parked on pending tool calls is kept. @default 900000 (15 min) */
  readonly parkedTurnTtlMs: number;
  /** Abort an upstream stream that makes no progress for this long. @default 60000 */
  readonly stallTimeoutMs: number;
  /** @default "info" */
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** @default "text" */
  readonly logFormat: "text" | "json";
  /** Browser origins allowed by CORS (older name of allowedOrigins; both lists count). @default [] */
  readonly corsOrigins: readonly string[];
  /** Host names served besides loopback (`*` = any); see server/request-guard.ts. @default [] */
  readonly allowedHosts: readonly string[];
  /** Browser origins allowed to call the API (CORS headers are sent for them). @default [] */
  readonly allowedOrigins: readonly string[];
  /** Drop a request whose body has not fully arrived after this long. @default 30000 */
  readonly bodyTimeoutMs: number;
  /**
   * On SIGTERM or SIGINT, how long the requests in flight may still finish (new ones are refused at once); then the
   * streams still open end with a shutting-down error event. @default 10000
   */
  readonly drainTimeoutMs: number;
  /**
   * Image-input overrides: `id` marks a model as accepting images, `-id` as not (wins over Cursor's answer and the
   * family table). @default []
   */
  readonly visionModels: readonly string[];
  /**
   * Which tools Cursor's model sees on an HTTP-door turn: `client` (only the client's tools, through
   * `x-cursor-agent-allowed-tools`) or `native` (Cursor's built-in tools too, their calls redirected onto the
   * client's tools). @default "client"
   */
  readonly cursorTools: "client" | "native";
  /**
   * Which Cursor model serves Claude model ids of a family, as `family=id` (`opus`, `sonnet`, `haiku`); a family not
   * listed resolves to the newest matching model Cursor lists. @default []
   */
  readonly anthropicModels: readonly string[];
  /**
   * Model aliases for every API surface and `/v1/models`, as `NAME=ID` entries (the config file may also give an
   * object `{"NAME": "ID"}`); a client asking for NAME is served by the Cursor model ID. @default []
   */
  readonly modelAliases: readonly string[];
  /** Blob store and other data. @default platform data dir (see util/paths.ts) */
  readonly dataDir: string;
  /** Most turns parked on tool calls at once; beyond it the oldest is closed. @default 5000 */
  readonly maxParkedTurns: number;
  /** Most conversations kept in the data directory (oldest removed first). @default 10000 */
  readonly maxConversations: number;
  /** Most bytes of conversations kept in the data directory (oldest removed first). @default 1073741824 (1 GiB) */
  readonly maxConversationBytes: number;
  /** credentials.json and config.json. @default platform config dir (see util/paths.ts) */
  readonly configDir: string;
  /** Cursor access token used as-is, without the credential store. Environment only. @default none */
  readonly cursorAccessToken: string | undefined;
  /** Cursor user API key (§3.5) to exchange for tokens. Environment only. @default none */
  readonly cursorApiKey: string | undefined;
  /** `file` (the data directory) or a Redis URL shared by several instances. @default "file" */
  readonly store: string;
  /** URL other instances reach this one at (tool results forwarded to it). @default http://<host>:<port> */
  readonly instanceUrl: string | undefined;
  /** Shared secret of the instances behind one Redis store; required with a Redis store. @default none */
  readonly clusterSecret: string | undefined;
  /**
   * The team gateway's price table overrides (config file only): model id pattern (`*` = any characters) → USD per
   * million tokens `{input, cachedInput, output}`, matched before the built-in table. @default {}
   */
  readonly prices: Readonly<
    Record<string, { readonly input: number; readonly cachedInput: number; readonly output: number }>
  >;
  /** Per cent of a virtual key's budget past which answers carry a warning (logged once per period). @default 80 */
  readonly budgetWarnPercent: number;
  /** Options of the embedded Cursor backend emulator. */
  readonly emulator: {
    /** Delay before the first event of a turn. @default 0 */
    readonly bootstrapLatencyMs: number;
    /** Pace of scripted output; 0 streams as fast as possible. @default 0 */
    readonly tokensPerSecond: number;
    /** Port of the emulator `serve` embeds until you log in (loopback only); 0 picks a free one. @default 0 */
    readonly port: number;
  };
}

/** How a string from the environment or argv turns into a typed value. */
export type SettingKind = "string" | "int" | "number" | "list";

/** One row of the settings table. */
export interface SettingSpec {
  /** Dotted path in {@link BridgeConfig}, e.g. `port` or `emulator.tokensPerSecond`. */
  name: string;
  flag: string | undefined;
  env: string | undefined;
  kind: SettingKind;
  /** Validates the value (after the string from env or argv has been turned into `kind`). */
  check: Check;
  /** Secrets are never read from the config file and never echoed. */
  secret: boolean;
  /** A secret the config file may hold in this (non-secret) form only, e.g. a digest of it. */
  fileCheck?: Check | undefined;
  /** Default value; computed from the platform paths or already resolved settings when needed. */
  defaultValue: (context: DefaultContext) => unknown;
  defaultText: string;
  description: string;
}

/** What defaults may depend on. */
export interface DefaultContext {
  paths: PathEnvironment;
  resolved: Readonly<Record<string, unknown>>;
}

const positiveInt = number({ integer: true, min: 1 });
const absolutePath = matching(/^([A-Za-z]:[\\/]|[\\/])/, "expected an absolute path");
const hostName = matching(/^(\*|[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?)$/, "expected a host name such as my-box.lan");
const origin = matching(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\s]+$/, "expected an origin such as http://localhost:3000");
const nonEmpty = string(1);

function spec(
  name: string,
  flag: string | undefined,
  env: string | undefined,
  kind: SettingKind,
  check: Check,
  defaultValue: unknown,
  defaultText: string,
  description: string,
  secret = false,
): SettingSpec {
  const compute =
    typeof defaultValue === "function" ? (defaultValue as SettingSpec["defaultValue"]) : () => defaultValue;
  return { name, flag, env, kind, check, secret, defaultValue: compute, defaultText, description };
}

const none = undefined;

/**
 * The default drain time of a graceful stop (ms). With the 2 s the streams left then get for their final error frame
 * (server/drain.ts FINAL_FRAMES_MS) and closing the stores, the whole stop fits in `docker stop`'s 10 s grace before
 * SIGKILL (Kubernetes gives 30 s); a longer drain needs a longer grace.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 7_000;

const ADMIN_KEY_DIGEST = matching(
  /^sha256:[0-9a-fA-F]{64}$/,
  'only its digest belongs in the config file: "sha256:" and the 64 hex digits `printf %s "$KEY" | sha256sum` prints',
);

const MODEL_ALIAS = /^[^\s=,]{1,256}=[\w.:/[\]-]{1,256}$/;
const aliasEntries = arrayOf(matching(MODEL_ALIAS, "expected NAME=ID, e.g. gpt-4o=gpt-5.2"));
/** `NAME=ID` entries; the config file may give them as an object of NAME → ID. */
const modelAliases: Check = (value) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return aliasEntries(value);
  return aliasEntries(Object.entries(value).map(([name, id]) => (typeof id === "string" ? `${name}=${id}` : name)));
};

const PRICE_FIELDS = ["input", "cachedInput", "output"] as const;
/** `{"pattern": {"input": USD, "cachedInput": USD, "output": USD}}` (per million tokens, each ≥ 0). */
const priceTable: Check = (value) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      message: 'expected an object such as {"claude-*opus*": {"input": 5, "cachedInput": 0.5, "output": 25}}',
    };
  }
  for (const [pattern, price] of Object.entries(value)) {
    if (!/^[\w.:/*[\]-]{1,256}$/.test(pattern))
      return { ok: false, message: `${pattern}: expected a model id pattern` };
    const fields = typeof price === "object" && price !== null ? (price as Record<string, unknown>) : {};
    const keys = Object.keys(fields);
    const complete =
      keys.length === 3 &&
      PRICE_FIELDS.every((field) => {
        const amount = fields[field];
        return typeof amount === "number" && Number.isFinite(amount) && amount >= 0;
      });
    if (!complete)
      return {
        ok: false,
        message: `${pattern}: expected {"input", "cachedInput", "output"} in USD per million tokens (numbers ≥ 0)`,
      };
  }
  return { ok: true, value };
};

/** The settings table, in `--help` order. */
// biome-ignore format: one row per setting reads as a table
export const SETTINGS: readonly SettingSpec[] = [
  spec("host", "--host", "CURSOR_BRIDGE_HOST", "string", nonEmpty, "127.0.0.1", "127.0.0.1", "Interface to listen on; non-loopback requires an API key (16+ characters)"),
  spec("port", "--port", "CURSOR_BRIDGE_PORT", "int", number({ integer: true, min: 0, max: 65535 }), 8765, "8765", "TCP port (0 = any free port)"),
  spec("apiKey", "--api-key", "CURSOR_BRIDGE_API_KEY", "string", optional(nonEmpty), none, "none", "Bearer key clients must send to the bridge", true),
  { ...spec("adminKey", "--admin-key", "CURSOR_BRIDGE_ADMIN_KEY", "string", optional(either(ADMIN_KEY_DIGEST, string(16, "use at least 16 characters"))), none, "none", "Key of the admin API under /admin (or sha256:<hex> of it; the config file takes only that form)", true), fileCheck: ADMIN_KEY_DIGEST },
  spec("upstream", "--upstream", "CURSOR_BRIDGE_UPSTREAM", "string", oneOf(["auto", "cursor", "emulator"]), "auto", "auto", "auto | cursor | emulator"),
  spec("cursorApiUrl", "--cursor-api-url", "CURSOR_API_URL", "string", httpUrl, "https://api2.cursor.sh", "https://api2.cursor.sh", "Cursor API base URL (RPCs and /auth)"),
  spec("cursorAgentUrl", "--cursor-agent-url", "CURSOR_AGENT_URL", "string", httpUrl, (c: DefaultContext) => c.resolved.cursorApiUrl, "cursorApiUrl", "Base URL for agent.v1.AgentService"),
  spec("cursorWebsiteUrl", "--cursor-website-url", "CURSOR_WEBSITE_URL", "string", httpUrl, "https://cursor.com", "https://cursor.com", "Website with the browser login page"),
  spec("clientVersion", "--client-version", "CURSOR_CLIENT_VERSION", "string", optional(nonEmpty), none, "detected", "x-cursor-client-version to send"),
  spec("transport", "--transport", "CURSOR_BRIDGE_TRANSPORT", "string", oneOf(["auto", "http2", "http1"]), "auto", "auto", "auto | http2 | http1"),
  spec("upstreamStreamsPerConnection", "--upstream-streams-per-connection", "CURSOR_BRIDGE_UPSTREAM_STREAMS_PER_CONNECTION", "int", positiveInt, 100, "100", "Most streams (turns, parked ones too) per HTTP/2 connection to Cursor; more open another"),
  spec("reasoningOutput", "--reasoning-output", "CURSOR_BRIDGE_REASONING_OUTPUT", "string", oneOf(["reasoning_content", "think-tags", "none"]), "reasoning_content", "reasoning_content", "reasoning_content | think-tags | none"),
  spec("maxBodyBytes", "--max-body-bytes", "CURSOR_BRIDGE_MAX_BODY_BYTES", "int", positiveInt, 4 * 1024 * 1024, "4194304", "Largest accepted request body (bytes)"),
  spec("maxImageBytes", "--max-image-bytes", "CURSOR_BRIDGE_MAX_IMAGE_BYTES", "int", positiveInt, 15 * 1024 * 1024, "15728640", "Total image bytes accepted per request (the body limit grows to fit them)"),
  spec("parkedTurnTtlMs", "--parked-turn-ttl-ms", "CURSOR_BRIDGE_PARKED_TURN_TTL_MS", "int", positiveInt, 15 * 60_000, "900000", "How long a turn waits for tool results (ms)"),
  spec("bodyTimeoutMs", "--body-timeout-ms", "CURSOR_BRIDGE_BODY_TIMEOUT_MS", "int", positiveInt, 30_000, "30000", "Drop a request whose body takes longer than this (ms)"),
  spec("drainTimeoutMs", "--drain-timeout-ms", "CURSOR_BRIDGE_DRAIN_TIMEOUT_MS", "int", number({ integer: true, min: 0 }), DEFAULT_DRAIN_TIMEOUT_MS, "7000", "On SIGTERM/SIGINT, how long requests in flight may finish (ms); then streams end with a shutting-down error"),
  spec("stallTimeoutMs", "--stall-timeout-ms", "CURSOR_BRIDGE_STALL_TIMEOUT_MS", "int", positiveInt, 60_000, "60000", "Abort an upstream stream idle this long (ms)"),
  spec("logLevel", "--log-level", "CURSOR_BRIDGE_LOG_LEVEL", "string", oneOf(["debug", "info", "warn", "error", "silent"]), "info", "info", "debug | info | warn | error | silent"),
  spec("logFormat", "--log-format", "CURSOR_BRIDGE_LOG_FORMAT", "string", oneOf(["text", "json"]), "text", "text", "text | json"),
  spec("allowedHosts", "--allowed-hosts", "CURSOR_BRIDGE_ALLOWED_HOSTS", "list", arrayOf(hostName), [], "loopback only", "Comma-separated extra Host names to answer (* = any; needs an API key)"),
  spec("allowedOrigins", "--allowed-origins", "CURSOR_BRIDGE_ALLOWED_ORIGINS", "list", arrayOf(origin), [], "none", "Comma-separated browser origins allowed to call the API (with CORS)"),
  spec("corsOrigins", "--cors-origins", "CURSOR_BRIDGE_CORS_ORIGINS", "list", arrayOf(origin), [], "none", "Older name of --allowed-origins (both lists count)"),
  spec("anthropicModels", "--anthropic-models", "CURSOR_BRIDGE_ANTHROPIC_MODELS", "list", arrayOf(matching(/^(opus|sonnet|haiku)=[\w.:/-]+$/)), [], "by family", "Cursor model for Claude ids of a family: opus=ID,sonnet=ID,haiku=ID"),
  spec("modelAliases", "--model-alias", "CURSOR_BRIDGE_MODEL_ALIASES", "list", modelAliases, [], "none", "Model alias NAME=ID for every surface and /v1/models (repeatable; env: comma-separated)"),
  spec("cursorTools", "--cursor-tools", "CURSOR_BRIDGE_CURSOR_TOOLS", "string", oneOf(["client", "native"]), "client", "client", "client (only the client's tools) | native (Cursor's built-in tools too)"),
  spec("visionModels", "--vision-models", "CURSOR_BRIDGE_VISION_MODELS", "list", arrayOf(matching(/^-?[\w.:/-]+$/)), [], "none", "Comma-separated model ids that accept images (-id: do not)"),
  spec("dataDir", "--data-dir", "CURSOR_BRIDGE_DATA_DIR", "string", absolutePath, (c: DefaultContext) => dataDir(c.paths), "platform data dir", "Blob store and other data"),
  spec("maxParkedTurns", "--max-parked-turns", "CURSOR_BRIDGE_MAX_PARKED_TURNS", "int", positiveInt, 5000, "5000", "Most turns parked on tool calls at once (oldest closed beyond)"),
  spec("maxConversations", "--max-conversations", "CURSOR_BRIDGE_MAX_CONVERSATIONS", "int", positiveInt, 10_000, "10000", "Most stored conversations (oldest removed beyond)"),
  spec("maxConversationBytes", "--max-conversation-bytes", "CURSOR_BRIDGE_MAX_CONVERSATION_BYTES", "int", positiveInt, 1024 * 1024 * 1024, "1073741824", "Most bytes of stored conversations (oldest removed beyond)"),
  spec("configDir", "--config-dir", "CURSOR_BRIDGE_CONFIG_DIR", "string", absolutePath, (c: DefaultContext) => configDir(c.paths), "platform config dir", "credentials.json and config.json"),
  spec("cursorAccessToken", none, "CURSOR_ACCESS_TOKEN", "string", optional(nonEmpty), none, "none", "Use this Cursor access token as-is (no refresh)", true),
  spec("cursorApiKey", none, "CURSOR_API_KEY", "string", optional(nonEmpty), none, "none", "Cursor user API key to exchange for tokens", true),
  spec("store", "--store", "CURSOR_BRIDGE_STORE", "string", either(oneOf(["file"]), matching(/^rediss?:\/\/[^\s]+$/, "expected file or redis://host:port/db")), "file", "file", "file | redis://host:port/db | rediss://… (shared by several instances)"),
  spec("instanceUrl", "--instance-url", "CURSOR_BRIDGE_INSTANCE_URL", "string", optional(httpUrl), none, "http://<host>:<port>", "URL other instances reach this one at (Redis store only)"),
  spec("clusterSecret", "--cluster-secret", "CURSOR_BRIDGE_CLUSTER_SECRET", "string", optional(string(16, "use at least 16 characters")), none, "none", "Secret shared by the instances of one Redis store (required with it)", true),
  spec("prices", none, none, "string", priceTable, {}, "built-in table", "Config file only: model pattern → USD per million tokens {input, cachedInput, output}, before the built-in table"),
  spec("budgetWarnPercent", "--budget-warn-percent", "CURSOR_BRIDGE_BUDGET_WARN_PERCENT", "number", number({ min: 1, max: 100 }), 80, "80", "Per cent of a key's budget past which answers carry a warning"),
  spec("emulator.bootstrapLatencyMs", "--emulator-bootstrap-latency-ms", "CURSOR_BRIDGE_EMULATOR_BOOTSTRAP_LATENCY_MS", "int", number({ integer: true, min: 0 }), 0, "0", "Emulator: delay before the first event (ms)"),
  spec("emulator.port", "--emulator-port", "CURSOR_BRIDGE_EMULATOR_PORT", "int", number({ integer: true, min: 0, max: 65535 }), 0, "0 (any free port)", "Emulator: port of the one serve embeds until you log in (on 127.0.0.1)"),
  spec("emulator.tokensPerSecond", "--emulator-tokens-per-second", "CURSOR_BRIDGE_EMULATOR_TOKENS_PER_SECOND", "number", number({ min: 0 }), 0, "0 (unpaced)", "Emulator: output pace"),
];

/** Pseudo-setting naming the config file itself. */
export const CONFIG_FILE_SETTING = {
  name: "config",
  flag: "--config",
  env: "CURSOR_BRIDGE_CONFIG",
  defaultText: "<configDir>/config.json",
  description: "JSON config file (settings by name; secrets not allowed)",
} as const;

/** One line of `serve --help`. */
export interface ConfigDescription {
  name: string;
  flag: string | undefined;
  env: string | undefined;
  default: string;
  description: string;
}

/** The settings table for help output. */
export function describeConfig(): ConfigDescription[] {
  const rows: ConfigDescription[] = [{ ...CONFIG_FILE_SETTING, default: CONFIG_FILE_SETTING.defaultText }];
  for (const setting of SETTINGS) {
    const { name, flag, env, defaultText, description } = setting;
    rows.push({ name, flag, env, default: defaultText, description });
  }
  return rows;
}

/** The setting a command-line flag sets (`--port` → `port`); undefined for unknown flags. */
export function settingForFlag(flag: string): string | undefined {
  if (flag === CONFIG_FILE_SETTING.flag) return CONFIG_FILE_SETTING.name;
  return SETTINGS.find((setting) => setting.flag === flag)?.name;
}
