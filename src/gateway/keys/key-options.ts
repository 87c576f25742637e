/**
 * The settings of a key as people write them, shared by `keys create` and the admin API: a budget `10/month`, a
 * duration `30d`, model globs `gpt-5*,claude-*`, counts. Each refusal names the setting as its reader wrote it (the
 * CLI's `--max-parallel`, the admin API's `max_parallel`) and shows the expected form.
 */
import { isAccountName } from "../../stores/accounts.js";
import type { StoredKeyLimits } from "../../stores/types.js";
import { ProxyError } from "../../util/errors.js";
import { looksLikeSecret } from "../../util/logger.js";

const PERIODS = ["day", "week", "month"] as const;
type Period = (typeof PERIODS)[number];

const UNITS_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** Who wrote the settings: `keys create/update` flags, or the admin API's JSON fields. */
export type SettingsDialect = "cli" | "api";

/** The admin API's field for each CLI option name. */
const API_FIELDS: Record<string, string> = { "max-parallel": "max_parallel" };

/** The setting as its reader wrote it: `--max-parallel` (CLI) or `` `max_parallel` `` (admin API). */
export function settingName(param: string, dialect: SettingsDialect = "cli"): string {
  return dialect === "cli" ? `--${param}` : `\`${API_FIELDS[param] ?? param}\``;
}

function invalid(param: string, message: string, dialect: SettingsDialect = "cli"): ProxyError {
  return new ProxyError("invalid_request", `Invalid ${settingName(param, dialect)}${message}`, {
    param: dialect === "cli" ? param : (API_FIELDS[param] ?? param),
    detail: "invalid_argument",
  });
}

/** `10/month`, `2.5/day`, `$100/week` → a budget. */
export function parseBudget(
  text: string,
  param = "budget",
  dialect: SettingsDialect = "cli",
): { usd: number; period: Period } {
  const match = text.trim().match(/^\$?(\d+(?:\.\d{1,6})?)\s*\/\s*([a-z]+)$/i);
  const usd = Number(match?.[1]);
  const period = match?.[2]?.toLowerCase() as Period | undefined;
  if (match === null || !(usd > 0) || period === undefined || !PERIODS.includes(period)) {
    throw invalid(
      param,
      ` "${text.slice(0, 40)}": expected USD/PERIOD with PERIOD day, week or month, e.g. 10/month or 2.50/day.`,
      dialect,
    );
  }
  return { usd, period };
}

/** `90m`, `12h`, `30d`, `2w` → milliseconds. */
export function parseDuration(text: string, param = "expires", dialect: SettingsDialect = "cli"): number {
  const match = text.trim().match(/^(\d+)\s*([mhdw])$/i);
  const amount = Number(match?.[1]);
  const unit = UNITS_MS[match?.[2]?.toLowerCase() ?? ""];
  if (match === null || unit === undefined || !(amount > 0) || amount * unit > 100 * 365 * 86_400_000) {
    throw invalid(
      param,
      ` "${text.slice(0, 40)}": expected a number and a unit m, h, d or w, e.g. 90m, 12h, 30d or 2w.`,
      dialect,
    );
  }
  return amount * unit;
}

/** A positive whole number (`--rpm 60`). */
export function parseCount(value: string | number, param: string, dialect: SettingsDialect = "cli"): number {
  const number = typeof value === "number" ? value : /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw invalid(param, ": expected a whole number of at least 1.", dialect);
  }
  return number;
}

const GLOB = /^[\w.:/*?[\]-]{1,256}$/;

/** `gpt-5*,claude-*` (or a list) → model globs; `*` any characters, `?` one. */
export function parseModels(
  value: string | readonly string[],
  param = "models",
  dialect: SettingsDialect = "cli",
): string[] {
  const items = (typeof value === "string" ? value.split(",") : value.flatMap((item) => item.split(",")))
    .map((item) => item.trim())
    .filter((item) => item !== "");
  const bad = items.find((item) => !GLOB.test(item));
  if (items.length === 0 || bad !== undefined) {
    throw invalid(param, ": expected comma-separated model ids or globs, e.g. gpt-5*,claude-4.5-sonnet.", dialect);
  }
  return [...new Set(items)];
}

/** Key material a name must not look like (it would reach lists, logs and metric labels). */
const KEY_SHAPED = /^(cbk-|sk-|sk_|key_|cur_|crsr_|eyJ)/i;

/**
 * A key name: 1–64 letters, digits, `.`, `_`, `-`, `@` (what lists, logs and metrics labels show); never shaped like
 * a key id or key material (`cbk-…`, `sk-…`, a JWT, a Cursor API key).
 */
export function parseKeyName(value: string, param = "name", dialect: SettingsDialect = "cli"): string {
  const name = value.trim();
  if (!/^[A-Za-z0-9][\w.@-]{0,63}$/.test(name) || /^vk_[0-9a-f]{16}$/.test(name)) {
    throw invalid(
      param,
      ": use 1 to 64 letters, digits, dots, dashes, underscores or @, starting with a letter or digit (and not shaped like a key id).",
      dialect,
    );
  }
  if (KEY_SHAPED.test(name) || looksLikeSecret(name)) {
    throw invalid(
      param,
      ": it looks like key material (cbk-…, sk-…, key_…, a JWT), which would then show in lists, logs and metrics; name the person or tool instead.",
      dialect,
    );
  }
  return name;
}

/** A named Cursor account (`--account`): the same alphabet as key names. */
export function parseAccount(value: string, param = "account", dialect: SettingsDialect = "cli"): string {
  const account = value.trim();
  // The rule of the account names `login --account` gives (stores/accounts.ts), so a key can only name one that can exist.
  if (!isAccountName(account)) {
    throw invalid(
      param,
      `: use 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (${dialect === "cli" ? "the name `login --account` gave" : "the name of a login on the server"}).`,
      dialect,
    );
  }
  return account;
}

/** What `keys create` and `POST /admin/keys` accept, as strings or numbers. */
export interface KeySettingsInput {
  name: string;
  budget?: string | undefined;
  rpm?: string | number | undefined;
  tpm?: string | number | undefined;
  maxParallel?: string | number | undefined;
  models?: string | readonly string[] | undefined;
  account?: string | undefined;
  expires?: string | undefined;
}

/** The checked settings of a new key. */
export interface KeySettings {
  name: string;
  limits: StoredKeyLimits;
  models: string[] | undefined;
  account: string | undefined;
  /** Lifetime from creation, ms. */
  expiresInMs: number | undefined;
}

/** Checks every setting of a new key. @throws ProxyError `invalid_request` naming the first bad one. */
export function parseKeySettings(input: KeySettingsInput, dialect: SettingsDialect = "cli"): KeySettings {
  const changes = parseKeyChanges({ ...input, name: undefined }, dialect);
  return {
    name: parseKeyName(input.name, "name", dialect),
    limits: changes.limits,
    models: changes.models ?? undefined,
    account: changes.account ?? undefined,
    expiresInMs: changes.expiresInMs ?? undefined,
  };
}

/** What `keys update` and `PATCH /admin/keys/NAME` accept: any setting but the name; `"none"` clears one. */
export type KeyChangesInput = Partial<Omit<KeySettingsInput, "name">> & { name?: undefined };

/** Checked changes: a limit set to a value, or to null (cleared); absent = unchanged. */
export interface KeyChanges {
  limits: StoredKeyLimits;
  /** The limits cleared (`--rpm none`). */
  cleared: Array<keyof StoredKeyLimits>;
  /** null = every model again. */
  models?: string[] | null | undefined;
  /** null = the default account. */
  account?: string | null | undefined;
  /** null = never expires; else the lifetime from now, ms. */
  expiresInMs?: number | null | undefined;
}

const NONE = /^\s*(none|null|off)\s*$/i;
const isNone = (value: unknown) => value === null || (typeof value === "string" && NONE.test(value));

/** Checks the settings given (each may be `none` to clear it). @throws ProxyError naming the first bad one. */
export function parseKeyChanges(input: KeyChangesInput, dialect: SettingsDialect = "cli"): KeyChanges {
  const changes: KeyChanges = { limits: {}, cleared: [] };
  const count = (value: string | number | undefined, param: string, field: "rpm" | "tpm" | "maxParallel") => {
    if (value === undefined) return;
    if (isNone(value)) changes.cleared.push(field);
    else changes.limits[field] = parseCount(value, param, dialect);
  };
  count(input.rpm, "rpm", "rpm");
  count(input.tpm, "tpm", "tpm");
  count(input.maxParallel, "max-parallel", "maxParallel");
  if (input.budget !== undefined) {
    if (isNone(input.budget)) changes.cleared.push("budget");
    else changes.limits.budget = parseBudget(input.budget, "budget", dialect);
  }
  if (input.models !== undefined) {
    changes.models = isNone(input.models) ? null : parseModels(input.models, "models", dialect);
  }
  if (input.account !== undefined) {
    changes.account = isNone(input.account) ? null : parseAccount(input.account, "account", dialect);
  }
  if (input.expires !== undefined) {
    changes.expiresInMs = isNone(input.expires) ? null : parseDuration(input.expires, "expires", dialect);
  }
  return changes;
}
