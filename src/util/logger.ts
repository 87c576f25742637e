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
  /(authorization|secret|password|passwd|(?:api|admin)[-_]?key|cookie|verifier|credential)|(^|[-_a-z])token$|Token$/i;
const JWT = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g;
// A token, not a placeholder: `Bearer <key>` in a hint documents where a key goes and stays readable.
const BEARER = /(Bearer\s+)(?![<[])[^\s"',`]+/gi;
// Cursor's API keys (`crsr_` or `key_` and 64 hex digits) and other `prefix_` secrets (`sk_live_…`, `cur_…`): the
// prefix, then a run of at least 10 letters, digits, `-` and `_` with a digit in it, redacted whole (a key with a
// `-` or `_` in it leaves no tail behind). A snake_case identifier that starts the same way (the error code
// `key_budget_exceeded`, the detail `key_rpm`) has no digit: no key, it stays readable.
const CURSOR_KEY = /\b(?:crsr|cur|key|sk)_(?=[-_A-Za-z]*\d)[-\w]{10,}/g;
// OpenAI-style keys (`sk-…`, `sk-proj-…`), which clients sometimes send to the bridge by mistake.
const DASHED_KEY = /\bsk-[A-Za-z0-9_-]{16,}/g;
// The team gateway's virtual keys (`cbk-` + 43 characters); their ids (`vk_…`) and 10-character prefixes stay.
const VIRTUAL_KEY = /\bcbk-[A-Za-z0-9_-]{16,}/g;

// Every pattern above needs one of these; a text without any (most log values: ids, paths, counts) is returned as it
// is after one test instead of four replaces (the access log redacts every field of every request).
const MAYBE_SECRET = /bearer|eyJ|(?:crsr|cur|key|sk)_|cbk-|sk-/i;

/** Whether a string holds something shaped like key material (a bearer token, a JWT, a Cursor, OpenAI or virtual key). */
export function looksLikeSecret(text: string): boolean {
  return redactText(text) !== text;
}

/** Replaces anything that looks like a credential in a string. */
export function redactText(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  return text
    .replace(BEARER, "$1[redacted]")
    .replace(JWT, "[redacted-jwt]")
    .replace(CURSOR_KEY, "[redacted-key]")
    .replace(DASHED_KEY, "sk-[redacted]")
    .replace(VIRTUAL_KEY, "cbk-[redacted]");
}

// C0/C1 controls and the Unicode line separators: each could end a log line or rewrite the terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

// biome-ignore lint/suspicious/noControlCharactersInRegex: a safe word has no control characters
const SAFE_WORD = /^[^\s"=\\\u0000-\u001f\u007f-\u009f\u2028\u2029]+$/;

/** Longest string field a log line carries; longer values (a 1 MB model name) are cut. */
export const MAX_LOG_FIELD_CHARS = 1000;

function escapeControl(char: string): string {
  if (char === "\n") return "\\n";
  if (char === "\r") return "\\r";
  if (char === "\t") return "\\t";
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * A client-supplied value made safe to embed in one line of text (a log message, an error message): control
 * characters escaped, cut to `max` characters with a note of how much was cut.
 */
export function clampForMessage(text: string, max: number): string {
  const cut = text.length > max ? `${text.slice(0, max)}…(+${text.length - max} chars)` : text;
  return cut.replace(CONTROL, escapeControl);
}

/** Levels of nested objects a log field keeps; anything deeper is written as {@link TOO_DEEP}. */
export const MAX_REDACT_DEPTH = 6;
/** What stands for an object nested deeper than {@link MAX_REDACT_DEPTH} (never the object itself, unredacted). */
export const TOO_DEEP = "[nested too deep]";

/**
 * Deep-copies a value with secrets removed (keys that look secret, and token-shaped strings anywhere). An object
 * nested deeper than {@link MAX_REDACT_DEPTH} becomes {@link TOO_DEEP}: returned as it was, its secrets would reach
 * the line unredacted, and a cycle in it would make the line's JSON throw.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_REDACT_DEPTH) return TOO_DEEP;
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
  /**
   * The server's own secrets (`--api-key`, `--admin-key`, `--cluster-secret`): written as `[redacted]` wherever a
   * line would hold them (a client that sends its key as the model, a key pasted into a path), since no pattern
   * recognises an operator's key. Values shorter than {@link MIN_HIDDEN_SECRET_CHARS} are not looked for.
   */
  secrets?: readonly (string | undefined)[];
}

/** Shortest secret {@link LoggerOptions.secrets} looks for: a shorter one could blank ordinary words of every line. */
export const MIN_HIDDEN_SECRET_CHARS = 8;

/** The forms a secret takes in a line: as it is, and escaped inside a JSON string (text values quote the same way). */
function hiddenForms(secrets: readonly (string | undefined)[] | undefined): string[] {
  const forms = new Set<string>();
  for (const secret of secrets ?? []) {
    if (secret === undefined || secret.length < MIN_HIDDEN_SECRET_CHARS) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  // Longest first, so a secret holding another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `line` with every form of the hidden secrets replaced. */
function hide(line: string, forms: readonly string[]): string {
  let out = line;
  for (const form of forms) if (out.includes(form)) out = out.replaceAll(form, "[redacted]");
  return out;
}

/** A text-format field value: bare when it is one safe word, JSON-quoted (so escaped and unforgeable) otherwise. */
function textValue(value: unknown): string {
  if (typeof value !== "string") {
    const json = JSON.stringify(value) ?? String(value);
    return json.length > MAX_LOG_FIELD_CHARS ? clampForMessage(json, MAX_LOG_FIELD_CHARS) : json;
  }
  const text = value.length > MAX_LOG_FIELD_CHARS ? clampForMessage(value, MAX_LOG_FIELD_CHARS) : value;
  return SAFE_WORD.test(text) ? text : JSON.stringify(text);
}

/** JSON-format fields: long strings cut (JSON itself escapes everything else). */
function clampFields(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      typeof value === "string" && value.length > MAX_LOG_FIELD_CHARS
        ? clampForMessage(value, MAX_LOG_FIELD_CHARS)
        : value;
  }
  return out;
}

/** The fields of a line logged without any (never written to). */
const NO_FIELDS: LogFields = Object.freeze({});

const LEVEL_LABEL: Record<LogLevel, string> = {
  debug: "DEBUG",
  info: "INFO ",
  warn: "WARN ",
  error: "ERROR",
  silent: "SILENT",
};

/** ` key=value` for one field of a text line, redacted as {@link redact} would; "" for an undefined value. */
function textField(key: string, value: unknown): string {
  if (value === undefined) return "";
  const safe = SECRET_KEY.test(key) && value !== null && value !== "" ? "[redacted]" : redact(value, 1);
  return safe === undefined ? "" : ` ${key}=${textValue(safe)}`;
}

/** Whether `{ ...fields }` would copy `key` (an own enumerable property). */
function isField(fields: LogFields, key: string): boolean {
  return Object.prototype.propertyIsEnumerable.call(fields, key);
}

/** Whether a key is one JavaScript orders before the others in an object (an array index: it starts with a digit). */
function indexLike(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57;
}

/** A logger's bound fields with what every line reads of them, worked out once per logger. */
interface BoundFields {
  fields: LogFields;
  keys: readonly string[];
  /** Whether a key is an array index (such keys make a line fall back to the merged object's own order). */
  indexLike: boolean;
}

/**
 * One text line, its fields redacted as {@link redact} would and written in one pass: the line the access log writes
 * for every request used to copy its fields twice (redact, then the list of the defined ones) on the way. The fields
 * are the bound ones, then the call's, written as `{ ...bound, ...fields }` would hold them (a call's field replaces a
 * bound one of the same name in its place) without building that object: the spread adds the call's fields one at a
 * time to a copy of the bound ones, about 10 KB allocated for the access log's twenty.
 */
function formatText(level: LogLevel, message: string, bound: BoundFields, fields: LogFields, now: number): string {
  let line = `${new Date(now).toISOString()} ${LEVEL_LABEL[level]} ${message}`;
  const own = Object.keys(fields);
  const { keys: boundKeys, indexLike: boundIndexLike } = bound;
  if (boundKeys.length > 0 && own.length > 0 && (boundIndexLike || own.some(indexLike))) {
    // Array indices go first in a merged object, in numeric order: let the object itself decide (never in src/).
    const merged = { ...bound.fields, ...fields };
    for (const key of Object.keys(merged)) line += textField(key, merged[key]);
    return line;
  }
  for (const key of boundKeys) line += textField(key, isField(fields, key) ? fields[key] : bound.fields[key]);
  for (const key of own) if (boundKeys.length === 0 || !isField(bound.fields, key)) line += textField(key, fields[key]);
  return line;
}

/**
 * A logger with bound fields. Methods live on the prototype: a child logger (one per turn and per parked turn) is a
 * single small object instead of a set of closures.
 */
class BoundLogger implements Logger {
  private readonly boundFields: BoundFields;

  constructor(
    private readonly options: LoggerOptions,
    private readonly bound: LogFields,
    private readonly threshold: number,
    private readonly sink: LogSink,
    private readonly hidden: readonly string[] = [],
  ) {
    const keys = Object.keys(bound);
    this.boundFields = { fields: bound, keys, indexLike: keys.some(indexLike) };
  }

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
    // Object.assign into a fresh literal, not `{ ...bound, ...fields }`: keys added to a spread copy cost every child
    // (one per turn, kept by a parked turn) a hidden class of its own.
    return new BoundLogger(this.options, Object.assign({}, this.bound, fields), this.threshold, this.sink, this.hidden);
  }

  private log(level: LogLevel, message: string, fields: LogFields = NO_FIELDS): void {
    if (LEVEL_ORDER[level] < this.threshold) return;
    const safeMessage = clampForMessage(redactText(message), 4 * MAX_LOG_FIELD_CHARS);
    const time = (this.options.now ?? Date.now)();
    if ((this.options.format ?? "text") === "text") {
      this.write(formatText(level, safeMessage, this.boundFields, fields, time));
      return;
    }
    // A logger without bound fields needs no merged copy of them.
    const all = this.boundFields.keys.length > 0 ? { ...this.bound, ...fields } : fields;
    const safeFields = redact(all) as LogFields;
    this.write(
      JSON.stringify({ time: new Date(time).toISOString(), level, msg: safeMessage, ...clampFields(safeFields) }),
    );
  }

  private write(line: string): void {
    this.sink(this.hidden.length === 0 ? line : hide(line, this.hidden));
  }
}

/** Creates a logger that redacts every line. */
export function createLogger(options: LoggerOptions = {}, bound: LogFields = {}): Logger {
  const sink = options.sink ?? ((line: string) => process.stderr.write(`${line}\n`));
  return new BoundLogger(options, bound, LEVEL_ORDER[options.level ?? "info"], sink, hiddenForms(options.secrets));
}

/** A logger that drops everything (tests, library use). */
export const silentLogger: Logger = createLogger({ level: "silent" });
