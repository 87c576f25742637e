import type { OptionSpec } from "./args.js";
import type { CliIo } from "./io.js";

/** Exit codes shared by every command. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  unauthenticated: 3,
  unavailable: 4,
} as const;

/** A CLI sub-command. `run` resolves to the process exit code and never throws for expected failures. */
export interface Command {
  name: string;
  summary: string;
  /** Full help text printed by `cursor-bridge <name> --help`. */
  help: string;
  /**
   * The command's own options as it parses them, beyond those every command shares (`--json`, `--config` and each
   * setting's flag): each one is shown in `help` and documented (test/docs/cli-help.test.ts).
   */
  options: OptionSpec;
  run(argv: string[], io: CliIo): Promise<number>;
}
