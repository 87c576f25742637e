/**
 * Hints that name a cursor-bridge command ("run `cursor-bridge login`") are written once, in the installed form, and
 * rewritten where they leave the process (CLI output, HTTP error messages) for how this process was launched: from a
 * clone through npm (`npm start`, `npm run cli -- …`) the command that works is `npm run --silent cli -- login`, because
 * `cursor-bridge` is on no PATH there; `--silent` keeps npm's two-line banner off stdout, so a hint such as
 * `eval "$(npm run --silent cli -- setup claude-code)"` evaluates only what the command printed. The launcher is
 * process-wide: the CLI sets it once at start.
 */

/** Where the commands come from: the installed bin, or `npm run --silent cli --` in a clone. */
export type Launcher = "cursor-bridge" | "npm run --silent cli --";

/** The commands a hint may name. */
const COMMAND_HINT = /`cursor-bridge (?=(serve|emulator|login|logout|import|status|models|usage|doctor|setup)\b)/g;

let current: Launcher = "cursor-bridge";

/**
 * The launcher for an environment: npm sets `npm_package_name` and `npm_lifecycle_script` for the script it runs, so
 * this package's own script running its bin (`npm start`, `npm run cli`, `npm run emulator`) means a clone. Other
 * scripts (`npm test` starting the CLI in a child process) and other packages' scripts count as installed.
 */
export function launcherFromEnv(env: Readonly<Record<string, string | undefined>>): Launcher {
  const script = env.npm_lifecycle_script ?? "";
  return env.npm_package_name === "cursor-bridge" && /^node bin\/cursor-bridge\.js\b/.test(script)
    ? "npm run --silent cli --"
    : "cursor-bridge";
}

/** Sets the process-wide launcher; returns the previous one (so a caller can restore it). */
export function setLauncher(launcher: Launcher): Launcher {
  const previous = current;
  current = launcher;
  return previous;
}

/** The command line that runs `command` (e.g. "login") for the current launcher. */
export function commandLine(command: string): string {
  return `${current} ${command}`;
}

/** Rewrites every backquoted `cursor-bridge <command>` in `text` for the current launcher. */
export function withLauncher(text: string): string {
  return current === "cursor-bridge" ? text : text.replace(COMMAND_HINT, `\`${current} `);
}
