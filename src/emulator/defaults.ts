/** Defaults the CLI needs without loading the emulator itself (src/cli/emulator-command.ts). */

/** Default port of `cursor-bridge emulator`. */
export const DEFAULT_EMULATOR_PORT = 8766;
