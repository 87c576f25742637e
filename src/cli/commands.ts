import type { Command } from "./command.js";

/**
 * Every sub-command, in help order, each loaded only when it runs or its help is shown: a start of `serve` loads
 * serve's module alone, not the code of login, doctor or setup.
 */
export const COMMAND_LOADERS: ReadonlyArray<{ name: string; load(): Promise<Command> }> = [
  { name: "serve", load: async () => (await import("./serve.js")).serveCommand },
  { name: "emulator", load: async () => (await import("./emulator-command.js")).emulatorCommand },
  { name: "login", load: async () => (await import("./login.js")).loginCommand },
  { name: "logout", load: async () => (await import("./logout.js")).logoutCommand },
  { name: "import", load: async () => (await import("./import.js")).importCommand },
  { name: "status", load: async () => (await import("./status.js")).statusCommand },
  { name: "models", load: async () => (await import("./models.js")).modelsCommand },
  { name: "usage", load: async () => (await import("./usage.js")).usageCommand },
  { name: "doctor", load: async () => (await import("./doctor.js")).doctorCommand },
  { name: "setup", load: async () => (await import("./setup.js")).setupCommand },
];

/** The command named `name`, loaded; undefined for an unknown name. */
export async function loadCommand(name: string): Promise<Command | undefined> {
  return COMMAND_LOADERS.find((entry) => entry.name === name)?.load();
}

/** Every sub-command, loaded (for the command list of `--help`). */
export async function loadCommands(): Promise<readonly Command[]> {
  return Promise.all(COMMAND_LOADERS.map((entry) => entry.load()));
}
