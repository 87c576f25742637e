import type { Command } from "./command.js";

/** The commands other than `serve`, loaded together (one module to resolve instead of nine). */
const others = () => import("./other-commands.js");

/**
 * Every sub-command, in help order, loaded only when it runs or its help is shown: a start of `serve` loads serve's
 * module alone, not the code of login, doctor or setup (nor they serve's).
 */
export const COMMAND_LOADERS: ReadonlyArray<{ name: string; load(): Promise<Command> }> = [
  { name: "serve", load: async () => (await import("./serve.js")).serveCommand },
  { name: "emulator", load: async () => (await others()).emulatorCommand },
  { name: "login", load: async () => (await others()).loginCommand },
  { name: "logout", load: async () => (await others()).logoutCommand },
  { name: "import", load: async () => (await others()).importCommand },
  { name: "accounts", load: async () => (await others()).accountsCommand },
  { name: "status", load: async () => (await others()).statusCommand },
  { name: "models", load: async () => (await others()).modelsCommand },
  { name: "usage", load: async () => (await others()).usageCommand },
  { name: "doctor", load: async () => (await others()).doctorCommand },
  { name: "setup", load: async () => (await others()).setupCommand },
  { name: "keys", load: async () => (await import("./keys.js")).keysCommand },
  { name: "audit", load: async () => (await import("./audit.js")).auditCommand },
  { name: "acp", load: async () => (await import("./acp.js")).acpCommand },
];

/** The command named `name`, loaded; undefined for an unknown name. */
export async function loadCommand(name: string): Promise<Command | undefined> {
  return COMMAND_LOADERS.find((entry) => entry.name === name)?.load();
}

/** Every sub-command, loaded (for the command list of `--help`). */
export async function loadCommands(): Promise<readonly Command[]> {
  return Promise.all(COMMAND_LOADERS.map((entry) => entry.load()));
}
