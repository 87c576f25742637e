/**
 * The value checks of the settings table (settings.ts): small composable validators in place of a schema library,
 * because the configuration is read before `serve` prints its listening line and zod alone costs tens of
 * milliseconds to load there. Messages follow zod's wording, which the rest of the bridge uses for request bodies.
 */

/** The checked value, or why it was refused. */
export type CheckResult = { ok: true; value: unknown } | { ok: false; message: string };

/** A setting's validator. */
export type Check = (value: unknown) => CheckResult;

const pass = (value: unknown): CheckResult => ({ ok: true, value });
const refuse = (message: string): CheckResult => ({ ok: false, message });

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isNaN(value)) return "NaN";
  return typeof value;
}

/** A string of at least `min` characters (`message` when shorter). */
export function string(min = 0, message?: string): Check {
  return (value) => {
    if (typeof value !== "string") return refuse(`Invalid input: expected string, received ${typeName(value)}`);
    if (value.length < min) return refuse(message ?? `Too small: expected string to have >=${min} characters`);
    return pass(value);
  };
}

/** A string matching `pattern`. */
export function matching(pattern: RegExp, message?: string): Check {
  return (value) => {
    if (typeof value !== "string") return refuse(`Invalid input: expected string, received ${typeName(value)}`);
    return pattern.test(value) ? pass(value) : refuse(message ?? `Invalid string: must match pattern ${pattern}`);
  };
}

/** A finite number (an integer with `integer`) within [min, max]. */
export function number(options: { integer?: boolean; min?: number; max?: number } = {}): Check {
  return (value) => {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      return refuse(`Invalid input: expected number, received ${typeName(value)}`);
    }
    if (options.integer === true && !Number.isInteger(value)) {
      return refuse("Invalid input: expected int, received number");
    }
    if (options.min !== undefined && value < options.min) {
      return refuse(`Too small: expected number to be >=${options.min}`);
    }
    if (options.max !== undefined && value > options.max) {
      return refuse(`Too big: expected number to be <=${options.max}`);
    }
    return pass(value);
  };
}

/** One of `options`. */
export function oneOf(options: readonly string[]): Check {
  return (value) =>
    typeof value === "string" && options.includes(value)
      ? pass(value)
      : refuse(`Invalid option: expected one of ${options.map((o) => JSON.stringify(o)).join("|")}`);
}

/** An absolute http(s) URL. */
export const httpUrl: Check = (value) => {
  if (typeof value !== "string") return refuse(`Invalid input: expected string, received ${typeName(value)}`);
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return pass(value);
  } catch {
    // Not a URL at all: the same answer as a wrong protocol.
  }
  return refuse("Invalid URL");
};

/** `check`, or undefined. */
export function optional(check: Check): Check {
  return (value) => (value === undefined ? pass(undefined) : check(value));
}

/** An array whose every item passes `check` (the first refusal is reported). */
export function arrayOf(check: Check): Check {
  return (value) => {
    if (!Array.isArray(value)) return refuse(`Invalid input: expected array, received ${typeName(value)}`);
    const items: unknown[] = [];
    for (const item of value) {
      const checked = check(item);
      if (!checked.ok) return checked;
      items.push(checked.value);
    }
    return pass(items);
  };
}

/** The first of `checks` that passes; the last one's refusal otherwise. */
export function either(...checks: Check[]): Check {
  return (value) => {
    let last: CheckResult = refuse("Invalid input");
    for (const check of checks) {
      last = check(value);
      if (last.ok) return last;
    }
    return last;
  };
}
