import type { Command } from "./command.js";
import { doctorCommand } from "./doctor.js";
import { importCommand } from "./import.js";
import { loginCommand } from "./login.js";
import { logoutCommand } from "./logout.js";
import { modelsCommand } from "./models.js";
import { statusCommand } from "./status.js";
import { usageCommand } from "./usage.js";

/** Every sub-command, in help order. */
export const COMMANDS: readonly Command[] = [
  // serve and emulator (the lead's serve.ts / emulator-command.ts) go first, here.
  loginCommand,
  logoutCommand,
  importCommand,
  statusCommand,
  modelsCommand,
  usageCommand,
  doctorCommand,
];
