/** Default port of `cursor-bridge emulator` (apart from the emulator's code, so the CLI's help loads without it). */
export const DEFAULT_EMULATOR_PORT = 8766;
