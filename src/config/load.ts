/**
 * Resolves the configuration with precedence flags > environment > config file > defaults. This module is the only
 * reader of environment variables in src/, and even it only reads the record the composition root passes in.
 * Every validation error names the setting and the source its value came from; values themselves are never echoed.
 */
import { readFile } from "node:fs/promises";
import { homedir as osHomedir } from "node:os";
import { join } from "node:path";
import { ProxyError } from "../util/errors.js";
import { isJsonObject } from "../util/json-value.js";
import type { EnvRecord, PathEnvironment } from "../util/paths.js";
import { type BridgeConfig, CONFIG_FILE_SETTING, SETTINGS, type SettingSpec } from "./settings.js";

/** A flag value as parsed from argv (lists may repeat). */
export type FlagValue = string | number | readonly string[] | undefined;

/** Flags keyed by setting name (`port`, `emulator.tokensPerSecond`, plus `config`). */
export type ConfigFlags = Readonly<Record<string, FlagValue>>;

/** A config file that has been read and JSON-parsed. */
export interface ConfigFile {
  path: string;
  data: unknown;
}

/** Inputs of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** Environment variables; the composition root passes process.env. */
  env: EnvRecord;
  file?: ConfigFile | undefined;
  flags?: ConfigFlags;
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** @default os.homedir() */
  homedir?: string;
}

type Source = { kind: "flag" | "env" | "file" | "default"; label: string; value: unknown };

const FILE_IGNORED_KEYS = new Set(["$schema"]);

/** Flattens `{ emulator: { tokensPerSecond: 5 } }` to `{ "emulator.tokensPerSecond": 5 }`. */
function flattenFile(file: ConfigFile, errors: string[]): Map<string, unknown> {
  const values = new Map<string, unknown>();
  if (!isJsonObject(file.data)) {
    errors.push(`config file ${file.path}: expected a JSON object`);
    return values;
  }
  const visit = (object: Record<string, unknown>, prefix: string): void => {
    for (const [key, value] of Object.entries(object)) {
      const name = `${prefix}${key}`;
      if (prefix === "" && FILE_IGNORED_KEYS.has(key)) continue;
      if (isJsonObject(value) && SETTINGS.some((setting) => setting.name.startsWith(`${name}.`))) {
        visit(value, `${name}.`);
        continue;
      }
      const setting = SETTINGS.find((candidate) => candidate.name === name);
      if (setting === undefined) errors.push(`${name} (from config file ${file.path}): unknown setting`);
      else if (setting.secret && setting.fileCheck !== undefined) {
        const checked = setting.fileCheck(value);
        if (checked.ok) values.set(name, checked.value);
        else errors.push(`${name} (from config file ${file.path}): ${checked.message}`);
      } else if (setting.secret) {
        const where = setting.env === undefined ? "the environment" : `the environment (${setting.env})`;
        errors.push(
          `${name} (from config file ${file.path}): secrets are not allowed in the config file; use ${where}`,
        );
      } else values.set(name, value);
    }
  };
  visit(file.data, "");
  return values;
}

/** Turns an env/argv string into the setting's type; returns an error text when it cannot. */
function coerce(setting: SettingSpec, value: unknown): { value: unknown } | { error: string } {
  if (setting.kind === "list") {
    const items =
      typeof value === "string"
        ? value.split(",")
        : Array.isArray(value)
          ? value.flatMap((v) => String(v).split(","))
          : null;
    if (items === null) return { value };
    return { value: items.map((item) => item.trim()).filter((item) => item !== "") };
  }
  if (typeof value !== "string") return { value };
  if (setting.kind === "int") {
    return /^-?\d+$/.test(value.trim()) ? { value: Number(value.trim()) } : { error: "expected an integer" };
  }
  if (setting.kind === "number") {
    const number = value.trim() === "" ? Number.NaN : Number(value);
    return Number.isFinite(number) ? { value: number } : { error: "expected a number" };
  }
  return { value };
}

function pickSource(
  setting: SettingSpec,
  options: LoadConfigOptions,
  fileValues: Map<string, unknown>,
): Source | undefined {
  const flag = options.flags?.[setting.name];
  if (flag !== undefined) return { kind: "flag", label: `flag ${setting.flag ?? setting.name}`, value: flag };
  const envValue = setting.env === undefined ? undefined : options.env[setting.env];
  if (envValue !== undefined && envValue !== "") return { kind: "env", label: `env ${setting.env}`, value: envValue };
  if (fileValues.has(setting.name)) {
    return { kind: "file", label: `config file ${options.file?.path ?? ""}`, value: fileValues.get(setting.name) };
  }
  return undefined;
}

function setPath(target: Record<string, unknown>, name: string, value: unknown): void {
  const parts = name.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isJsonObject(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** The default platform, home and env for path-derived defaults. */
function pathEnvironment(options: LoadConfigOptions): PathEnvironment {
  return { env: options.env, platform: options.platform ?? process.platform, homedir: options.homedir ?? osHomedir() };
}

/**
 * Resolves every setting and returns a deeply frozen config.
 * @throws ProxyError `invalid_request` listing each invalid setting with its source.
 */
export function loadConfig(options: LoadConfigOptions): BridgeConfig {
  const errors: string[] = [];
  for (const name of Object.keys(options.flags ?? {})) {
    if (name !== CONFIG_FILE_SETTING.name && !SETTINGS.some((setting) => setting.name === name)) {
      errors.push(`${name} (from flags): unknown setting`);
    }
  }
  const fileValues = options.file === undefined ? new Map<string, unknown>() : flattenFile(options.file, errors);
  const paths = pathEnvironment(options);
  const resolved: Record<string, unknown> = {};
  const config: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const source = pickSource(setting, options, fileValues);
    const raw = source === undefined ? setting.defaultValue({ paths, resolved }) : source.value;
    const label = source?.label ?? "default";
    const coerced = source === undefined || source.kind === "file" ? { value: raw } : coerce(setting, raw);
    if ("error" in coerced) {
      errors.push(`${setting.name} (from ${label}): ${coerced.error}`);
      continue;
    }
    const checked = setting.check(coerced.value);
    if (!checked.ok) {
      errors.push(`${setting.name} (from ${label}): ${checked.message}`);
      continue;
    }
    resolved[setting.name] = checked.value;
    setPath(config, setting.name, checked.value);
  }
  if (errors.length > 0) {
    const param = errors[0]?.split(" ")[0];
    throw new ProxyError("invalid_request", `Invalid configuration:\n  - ${errors.join("\n  - ")}`, {
      ...(param === undefined ? {} : { param }),
      detail: "invalid_config",
    });
  }
  return deepFreeze(config as unknown as BridgeConfig);
}

/** Where the config file is: `--config`, else CURSOR_BRIDGE_CONFIG, else `<configDir>/config.json` (optional). */
export function resolveConfigFilePath(options: LoadConfigOptions): { path: string; required: boolean } {
  const flag = options.flags?.[CONFIG_FILE_SETTING.name];
  if (typeof flag === "string" && flag !== "") return { path: flag, required: true };
  const fromEnv = options.env[CONFIG_FILE_SETTING.env];
  if (fromEnv !== undefined && fromEnv !== "") return { path: fromEnv, required: true };
  // The file cannot move its own directory, so configDir here comes from flags, env or the platform default only.
  const dirSetting = SETTINGS.find((setting) => setting.name === "configDir")!;
  const source = pickSource(dirSetting, options, new Map());
  const dir = String(source?.value ?? dirSetting.defaultValue({ paths: pathEnvironment(options), resolved: {} }));
  return { path: join(dir, "config.json"), required: false };
}

/** Reads and parses a JSON config file; undefined when an optional file is absent. */
export async function readConfigFile(path: string, required: boolean): Promise<ConfigFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" && !required) return undefined;
    throw new ProxyError("invalid_request", `Could not read the config file ${path} (${String(code)}).`, {
      cause: error,
      detail: "invalid_config",
    });
  }
  try {
    return { path, data: JSON.parse(text) as unknown };
  } catch (error) {
    throw new ProxyError("invalid_request", `The config file ${path} is not valid JSON.`, {
      cause: error,
      detail: "invalid_config",
    });
  }
}

/** Finds, reads and applies the config file, then resolves everything. What the CLI calls. */
export async function loadConfigFromSources(options: Omit<LoadConfigOptions, "file">): Promise<BridgeConfig> {
  const { path, required } = resolveConfigFilePath(options);
  const file = await readConfigFile(path, required);
  return loadConfig({ ...options, file });
}
