import type { Command } from "./command.js";

/** Every sub-command, in help order. */
export const COMMANDS: readonly Command[] = [];
