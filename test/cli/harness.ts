/**
 * Runs CLI commands through `main(argv, io)` against a port-0 emulator, with a temporary HOME and XDG directories,
 * capturing stdout and stderr. `secrets` collects every token and API key a test handles so each test can assert
 * that none of them was printed.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { CliInput, CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { type Emulator, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";

/** Result of one CLI run. */
export interface RunResult {
  code: number;
  out: string;
  err: string;
}

/** A temp home plus the emulator the CLI is pointed at. */
export interface CliHarness {
  emulator: Emulator;
  home: string;
  env: Record<string, string | undefined>;
  /** Directory holding credentials.json. */
  configDir: string;
  /** Every secret seen so far; none may appear in any output. */
  secrets: Set<string>;
  run(argv: string[], options?: RunOptions): Promise<RunResult>;
  /** Asserts that no collected secret occurs in `text`. */
  expectNoSecrets(text: string): void;
  close(): Promise<void>;
}

/** Per-run options. */
export interface RunOptions {
  env?: Record<string, string | undefined>;
  input?: CliInput;
  isTty?: boolean;
  /** Called with every chunk written to stdout or stderr (e.g. to catch the login URL). */
  onOutput?: (text: string) => void;
}

/** Starts an emulator (with `emulatorOptions`, on port 0) and a temp home. */
export async function createCliHarness(emulatorOptions: Omit<EmulatorOptions, "port"> = {}): Promise<CliHarness> {
  const emulator = await startEmulator({ ...emulatorOptions, port: 0 });
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-cli-"));
  const env: Record<string, string | undefined> = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: process.env.PATH,
    CURSOR_API_URL: emulator.url,
    CURSOR_WEBSITE_URL: emulator.url,
    CURSOR_BRIDGE_PORT: "0",
  };
  const secrets = new Set<string>();
  const expectNoSecrets = (text: string): void => {
    for (const secret of secrets) expect(text.includes(secret), "a secret was printed").toBe(false);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/);
  };
  return {
    emulator,
    home,
    env,
    configDir: join(home, ".config", "cursor-bridge"),
    secrets,
    async run(argv, options = {}) {
      let out = "";
      let err = "";
      const io: CliIo = {
        out: (text) => {
          out += text;
          options.onOutput?.(text);
        },
        err: (text) => {
          err += text;
          options.onOutput?.(text);
        },
        isTty: options.isTty ?? false,
        env: { ...env, ...options.env },
        ...(options.input === undefined ? {} : { input: options.input }),
      };
      const code = await main(argv, io);
      expectNoSecrets(out + err);
      return { code, out, err };
    },
    expectNoSecrets,
    async close() {
      await emulator.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Tokens issued by the emulator, registered as secrets. */
export function issueTokens(
  harness: CliHarness,
  options?: { userId?: string; email?: string; expiresInSeconds?: number },
): { accessToken: string; refreshToken: string } {
  const pair = harness.emulator.issueTokens(options);
  harness.secrets.add(pair.accessToken);
  harness.secrets.add(pair.refreshToken);
  return pair;
}

/** A fake stdin. */
export function fakeInput(options: { isTty: boolean; text: string }): CliInput {
  return {
    isTty: options.isTty,
    readAll: async () => options.text,
    readSecret: async () => options.text,
  };
}

/** Reads credentials.json, registers its secrets, and returns it with the file and directory modes. */
export function readStoredCredentials(harness: CliHarness): {
  record: { accessToken: string; refreshToken: string; apiKey?: string; source: string; email?: string };
  fileMode: number;
  dirMode: number;
} {
  const path = join(harness.configDir, "credentials.json");
  const record = JSON.parse(readFileSync(path, "utf8")) as {
    accessToken: string;
    refreshToken: string;
    apiKey?: string;
    source: string;
    email?: string;
  };
  for (const secret of [record.accessToken, record.refreshToken, record.apiKey]) {
    if (secret !== undefined) harness.secrets.add(secret);
  }
  return { record, fileMode: statSync(path).mode & 0o777, dirMode: statSync(harness.configDir).mode & 0o777 };
}

/** Writes credentials.json directly (as a previous login would have). */
export function writeStoredCredentials(
  harness: CliHarness,
  record: { accessToken: string; refreshToken: string; source?: string; email?: string },
): void {
  mkdirSync(harness.configDir, { recursive: true, mode: 0o700 });
  const full = { version: 1, source: "login", savedAt: new Date().toISOString(), ...record };
  writeFileSync(join(harness.configDir, "credentials.json"), JSON.stringify(full), { mode: 0o600 });
}

/** A CLI io for in-process commands (serve): what they print to stdout and stderr, kept line by line. */
export function captureIo(env: Record<string, string | undefined>): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => out.push(t), err: (t) => err.push(t), isTty: false, env };
  return { io, out, err };
}
