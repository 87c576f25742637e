/**
 * The one logger. Every line goes through redact(), which removes bearer tokens, JWTs, API keys and any value
 * under a secret-looking key, so no token can reach a log line even by accident.
 */

/** Log levels in increasing severity. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Structured fields attached to a log line. */
export type LogFields = Record<string, unknown>;

/** Minimal logger interface passed to every layer by injection. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

// A key is secret when it names a credential: "accessToken", "refresh_token", "x-api-key", "authorization"…
// but not counters such as "tokens" or "max_tokens".
const SECRET_KEY =
  /(authorization|secret|password|passwd|api[-_]?key|cookie|verifier|credential)|(^|[-_a-z])token$|Token$/i;
const JWT = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g;
const BEARER = /(Bearer\s+)[^\s",']+/gi;
const CURSOR_KEY = /\b(cur|key|sk)_[A-Za-z0-9_-]{8,}/g;

/** Replaces anything that looks like a credential in a string. */
export function redactText(text: string): string {
  return text.replace(BEARER, "$1[redacted]").replace(JWT, "[redacted-jwt]").replace(CURSOR_KEY, "[redacted-key]");
}

/** Deep-copies a value with secrets removed (keys that look secret, and token-shaped strings anywhere). */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return redactText(`${value.name}: ${value.message}`);
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      SECRET_KEY.test(key) && item !== undefined && item !== null && item !== ""
        ? "[redacted]"
        : redact(item, depth + 1);
  }
  return out;
}

/** Where log lines go; defaults to stderr. */
export type LogSink = (line: string) => void;

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** @default "info" */
  level?: LogLevel;
  /** @default "text" */
  format?: "text" | "json";
  /** @default writes to process.stderr */
  sink?: LogSink;
  /** @default Date.now */
  now?: () => number;
}

function formatText(level: LogLevel, message: string, fields: LogFields, now: number): string {
  const parts = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  const time = new Date(now).toISOString();
  return `${time} ${level.toUpperCase().padEnd(5)} ${message}${parts.length > 0 ? ` ${parts.join(" ")}` : ""}`;
}

/**
 * A logger with bound fields. Methods live on the prototype: a child logger (one per turn and per parked turn) is a
 * single small object instead of a set of closures.
 */
class BoundLogger implements Logger {
  constructor(
    private readonly options: LoggerOptions,
    private readonly bound: LogFields,
    private readonly threshold: number,
    private readonly sink: LogSink,
  ) {}

  debug(message: string, fields?: LogFields): void {
    this.log("debug", message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.log("info", message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.log("warn", message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.log("error", message, fields);
  }

  child(fields: LogFields): Logger {
    return new BoundLogger(this.options, { ...this.bound, ...fields }, this.threshold, this.sink);
  }

  private log(level: LogLevel, message: string, fields: LogFields = {}): void {
    if (LEVEL_ORDER[level] < this.threshold) return;
    const safeFields = redact({ ...this.bound, ...fields }) as LogFields;
    const safeMessage = redactText(message);
    const time = (this.options.now ?? Date.now)();
    this.sink(
      (this.options.format ?? "text") === "json"
        ? JSON.stringify({ time: new Date(time).toISOString(), level, msg: safeMessage, ...safeFields })
        : formatText(level, safeMessage, safeFields, time),
    );
  }
}

/** Creates a logger that redacts every line. */
export function createLogger(options: LoggerOptions = {}, bound: LogFields = {}): Logger {
  const sink = options.sink ?? ((line: string) => process.stderr.write(`${line}\n`));
  return new BoundLogger(options, bound, LEVEL_ORDER[options.level ?? "info"], sink);
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = createLogger({ level: "silent" });
