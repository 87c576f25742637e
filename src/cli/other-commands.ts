/** The commands other than `serve`, for commands.ts to load in one go. */
export { accountsCommand } from "./accounts.js";
export { doctorCommand } from "./doctor.js";
export { emulatorCommand } from "./emulator-command.js";
export { importCommand } from "./import.js";
export { loginCommand } from "./login.js";
export { logoutCommand } from "./logout.js";
export { modelsCommand } from "./models.js";
export { setupCommand } from "./setup.js";
export { statusCommand } from "./status.js";
export { usageCommand } from "./usage.js";
