import type { Command } from "./command.js";
import { doctorCommand } from "./doctor.js";
import { emulatorCommand } from "./emulator-command.js";
import { importCommand } from "./import.js";
import { loginCommand } from "./login.js";
import { logoutCommand } from "./logout.js";
import { modelsCommand } from "./models.js";
import { serveCommand } from "./serve.js";
import { setupCommand } from "./setup.js";
import { statusCommand } from "./status.js";
import { usageCommand } from "./usage.js";

/** Every sub-command, in help order. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  emulatorCommand,
  loginCommand,
  logoutCommand,
  importCommand,
  statusCommand,
  modelsCommand,
  usageCommand,
  doctorCommand,
  setupCommand,
];
