/**
 * The one zod issue → 400 translator every door's parser uses. A rejection is a ProxyError("invalid_request") whose
 * `param` is the exact field path and whose message names it, in one of two dialects:
 * - `openai`: `messages[2].content[0].type` and OpenAI's wording ("Missing required parameter: 'model'.");
 * - `anthropic`: `messages.1.content.0.type` and the wording of Anthropic's validation errors ("…: Field required").
 */
import type { z } from "zod";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage } from "../../util/logger.js";
import { formatParamPath } from "./param-path.js";

type Issue = z.core.$ZodIssue;

/** How a door words its validation errors. */
export type IssueDialect = "openai" | "anthropic";

/** A 400 naming `param`. */
export function invalidParam(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", message, { param });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" && Number.isInteger(value)) return "an integer";
  return `a ${typeof value}`;
}

/** A rejected value as the message shows it: JSON, escaped and cut (a client may send a megabyte). */
function shown(value: unknown): string {
  return clampForMessage(JSON.stringify(value) ?? String(value), 100);
}

function formatValues(values: readonly unknown[]): string {
  return values.map((value) => JSON.stringify(value)).join(", ");
}

function expectedOf(issue: Issue): string {
  if (issue.code === "invalid_type") return issue.expected;
  if (issue.code === "invalid_value") return formatValues(issue.values);
  return "";
}

/** The branch of a plain union (string | parts) that got furthest, so the error names the innermost field. */
function deepestBranchIssue(issue: z.core.$ZodIssueInvalidUnion): Issue | undefined {
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    for (const candidate of branch)
      if (best === undefined || candidate.path.length > best.path.length) best = candidate;
  }
  return best !== undefined && best.path.length > 0 ? best : undefined;
}

/** One dialect's words for each kind of issue. */
interface Words {
  param(path: readonly PropertyKey[]): string;
  missing(param: string): string;
  type(param: string, expected: string, input: unknown): string;
  value(param: string, allowed: string, input: unknown): string;
  tooSmall(param: string, issue: z.core.$ZodIssueTooSmall): string;
  tooBig(param: string, issue: z.core.$ZodIssueTooBig): string;
  custom(param: string, message: string): string;
  other(param: string, message: string): string;
}

const OPENAI: Words = {
  param: formatParamPath,
  missing: (param) => `Missing required parameter: '${param}'.`,
  type: (param, expected, input) =>
    `Invalid type for '${param}': expected ${expected}, but got ${describeType(input)}.`,
  value: (param, allowed, input) => `Invalid value for '${param}': expected one of ${allowed}, got ${shown(input)}.`,
  tooSmall(param, issue) {
    const minimum = Number(issue.minimum);
    if (issue.origin === "array") return `Invalid value for '${param}': expected at least ${minimum} item(s).`;
    if (issue.origin === "string") return `Invalid value for '${param}': must not be empty.`;
    return `Invalid value for '${param}': expected a number ${issue.inclusive ? ">=" : ">"} ${minimum}.`;
  },
  tooBig(param, issue) {
    const maximum = Number(issue.maximum);
    if (issue.origin === "array") return `Invalid value for '${param}': expected at most ${maximum} item(s).`;
    if (issue.origin === "string") return `Invalid value for '${param}': expected at most ${maximum} characters.`;
    return `Invalid value for '${param}': expected a number ${issue.inclusive ? "<=" : "<"} ${maximum}.`;
  },
  custom: (param, message) => message.replace(/\.$/, ` (at '${param}').`),
  other: (param, message) => `Invalid value for '${param}': ${message}.`,
};

const ANTHROPIC: Words = {
  param: (path) => path.map(String).join("."),
  missing: (param) => `${param}: Field required`,
  type: (param, expected, input) => `${param}: Input should be ${expected}, got ${describeType(input)}`,
  value: (param, allowed, input) => `${param}: Input should be one of ${allowed}, got ${shown(input)}`,
  tooSmall(param, issue) {
    if (issue.origin === "array") return `${param}: List should have at least ${Number(issue.minimum)} item(s)`;
    if (issue.origin === "string") return `${param}: String should not be empty`;
    return issue.inclusive
      ? `${param}: Input should be greater than or equal to ${Number(issue.minimum)}`
      : `${param}: Input should be greater than ${Number(issue.minimum)}`;
  },
  tooBig(param, issue) {
    const maximum = Number(issue.maximum);
    if (issue.origin === "array") return `${param}: List should have at most ${maximum} item(s)`;
    if (issue.origin === "string") return `${param}: String should have at most ${maximum} characters`;
    return issue.inclusive
      ? `${param}: Input should be less than or equal to ${maximum}`
      : `${param}: Input should be less than ${maximum}`;
  },
  custom: (param, message) => `${param}: ${message}`,
  other: (param, message) => `${param}: ${message}`,
};

/** Options of {@link issueToError}. */
export interface IssueOptions {
  dialect: IssueDialect;
  /** Allowed tags named for a discriminated union whose issue lists none. */
  discriminatorValues?: readonly unknown[] | undefined;
}

/** Turns a zod issue into a ProxyError naming the field; `prefix` is where the validated value sits in `body`. */
export function issueToError(
  issue: Issue,
  prefix: readonly PropertyKey[],
  body: unknown,
  options: IssueOptions,
): ProxyError {
  const words = options.dialect === "openai" ? OPENAI : ANTHROPIC;
  const path = [...prefix, ...issue.path];
  const param = words.param(path);
  const input = valueAt(body, path);
  if (input === undefined && issue.code !== "custom") return invalidParam(param, words.missing(param));
  switch (issue.code) {
    case "invalid_type":
      return invalidParam(param, words.type(param, issue.expected, input));
    case "invalid_value":
      return invalidParam(param, words.value(param, formatValues(issue.values), input));
    case "invalid_union":
      return unionToError(issue, path, body, options, words);
    case "too_small":
      return invalidParam(param, words.tooSmall(param, issue));
    case "too_big":
      return invalidParam(param, words.tooBig(param, issue));
    case "custom":
      return invalidParam(param, words.custom(param, issue.message));
    default:
      return invalidParam(param, words.other(param, issue.message));
  }
}

/**
 * Discriminated unions (message role, block type) name the allowed tags; plain unions (string | parts) report the
 * branch that got furthest, so an image part inside a content array names `…content[0].type`, not `…content`.
 */
function unionToError(
  issue: z.core.$ZodIssueInvalidUnion,
  path: PropertyKey[],
  body: unknown,
  options: IssueOptions,
  words: Words,
): ProxyError {
  if (issue.discriminator !== undefined) {
    const tagPath = path.at(-1) === issue.discriminator ? path : [...path, issue.discriminator];
    // OpenAI names the union itself (`messages[0]` with its role); Anthropic names the tag field.
    const at = options.dialect === "openai" ? path : tagPath;
    const listed = "options" in issue && Array.isArray(issue.options) ? issue.options : options.discriminatorValues;
    const allowed = listed === undefined ? "a supported value" : formatValues(listed);
    const input = options.dialect === "openai" ? valueAt(body, path) : valueAt(body, tagPath);
    return invalidParam(words.param(at), words.value(words.param(at), allowed, input));
  }
  const deeper = deepestBranchIssue(issue);
  if (deeper !== undefined) return issueToError(deeper, path, body, options);
  const expected = issue.errors.flatMap((branch) => branch.map(expectedOf)).filter((text) => text !== "");
  const choices = expected.length > 0 ? [...new Set(expected)].join(" or ") : "a different value";
  const param = words.param(path);
  return invalidParam(param, words.type(param, choices, valueAt(body, path)));
}

/**
 * Validates `value` (found at `prefix` inside `body`) against `schema`.
 * @throws ProxyError invalid_request (400) naming the first offending field.
 */
export function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
  prefix: readonly PropertyKey[],
  body: unknown,
  options: IssueOptions,
): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  if (first === undefined) throw new ProxyError("invalid_request", "Invalid request body.");
  throw issueToError(first, prefix, body, options);
}
