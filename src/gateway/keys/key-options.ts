/**
 * The settings of a key as people write them, shared by `keys create` and the admin API: a budget `10/month`, a
 * duration `30d`, model globs `gpt-5*,claude-*`, counts. Each refusal names the option and shows the expected form.
 */
import { isAccountName } from "../../stores/accounts.js";
import type { StoredKeyLimits } from "../../stores/types.js";
import { ProxyError } from "../../util/errors.js";

const PERIODS = ["day", "week", "month"] as const;
type Period = (typeof PERIODS)[number];

const UNITS_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", message, { param, detail: "invalid_argument" });
}

/** `10/month`, `2.5/day`, `$100/week` → a budget. */
export function parseBudget(text: string, param = "budget"): { usd: number; period: Period } {
  const match = text.trim().match(/^\$?(\d+(?:\.\d{1,6})?)\s*\/\s*([a-z]+)$/i);
  const usd = Number(match?.[1]);
  const period = match?.[2]?.toLowerCase() as Period | undefined;
  if (match === null || !(usd > 0) || period === undefined || !PERIODS.includes(period)) {
    throw invalid(
      param,
      `Invalid --${param} "${text.slice(0, 40)}": expected USD/PERIOD with PERIOD day, week or month, e.g. 10/month or 2.50/day.`,
    );
  }
  return { usd, period };
}

/** `90m`, `12h`, `30d`, `2w` → milliseconds. */
export function parseDuration(text: string, param = "expires"): number {
  const match = text.trim().match(/^(\d+)\s*([mhdw])$/i);
  const amount = Number(match?.[1]);
  const unit = UNITS_MS[match?.[2]?.toLowerCase() ?? ""];
  if (match === null || unit === undefined || !(amount > 0) || amount * unit > 100 * 365 * 86_400_000) {
    throw invalid(
      param,
      `Invalid --${param} "${text.slice(0, 40)}": expected a number and a unit m, h, d or w, e.g. 90m, 12h, 30d or 2w.`,
    );
  }
  return amount * unit;
}

/** A positive whole number (`--rpm 60`). */
export function parseCount(value: string | number, param: string): number {
  const number = typeof value === "number" ? value : /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw invalid(param, `Invalid --${param}: expected a whole number of at least 1.`);
  }
  return number;
}

const GLOB = /^[\w.:/*?[\]-]{1,256}$/;

/** `gpt-5*,claude-*` (or a list) → model globs; `*` any characters, `?` one. */
export function parseModels(value: string | readonly string[], param = "models"): string[] {
  const items = (typeof value === "string" ? value.split(",") : value.flatMap((item) => item.split(",")))
    .map((item) => item.trim())
    .filter((item) => item !== "");
  const bad = items.find((item) => !GLOB.test(item));
  if (items.length === 0 || bad !== undefined) {
    throw invalid(
      param,
      `Invalid --${param}: expected comma-separated model ids or globs, e.g. gpt-5*,claude-4.5-sonnet.`,
    );
  }
  return [...new Set(items)];
}

/** A key name: 1–64 letters, digits, `.`, `_`, `-`, `@` (what lists, logs and metrics labels show). */
export function parseKeyName(value: string, param = "name"): string {
  const name = value.trim();
  if (!/^[A-Za-z0-9][\w.@-]{0,63}$/.test(name) || /^vk_[0-9a-f]{16}$/.test(name)) {
    throw invalid(
      param,
      "Invalid --name: use 1 to 64 letters, digits, dots, dashes, underscores or @, starting with a letter or digit (and not shaped like a key id).",
    );
  }
  return name;
}

/** A named Cursor account (`--account`): the same alphabet as key names. */
export function parseAccount(value: string, param = "account"): string {
  const account = value.trim();
  // The rule of the account names `login --account` gives (stores/accounts.ts), so a key can only name one that can exist.
  if (!isAccountName(account)) {
    throw invalid(
      param,
      "Invalid --account: use 1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (the name `login --account` gave).",
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
export function parseKeySettings(input: KeySettingsInput): KeySettings {
  const limits: StoredKeyLimits = {};
  if (input.rpm !== undefined) limits.rpm = parseCount(input.rpm, "rpm");
  if (input.tpm !== undefined) limits.tpm = parseCount(input.tpm, "tpm");
  if (input.maxParallel !== undefined) limits.maxParallel = parseCount(input.maxParallel, "max-parallel");
  if (input.budget !== undefined) limits.budget = parseBudget(input.budget);
  return {
    name: parseKeyName(input.name),
    limits,
    models: input.models === undefined ? undefined : parseModels(input.models),
    account: input.account === undefined ? undefined : parseAccount(input.account),
    expiresInMs: input.expires === undefined ? undefined : parseDuration(input.expires),
  };
}
