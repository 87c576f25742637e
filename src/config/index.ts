/** Public surface of config/: read only by the composition roots (cli/, server/, plugin/). */
export { assertSafeBinding, isLoopbackHost } from "./host.js";
export {
  type ConfigFile,
  type ConfigFlags,
  type FlagValue,
  type LoadConfigOptions,
  loadConfig,
  loadConfigFromSources,
  readConfigFile,
  resolveConfigFilePath,
} from "./load.js";
export {
  type BridgeConfig,
  type ConfigDescription,
  describeConfig,
  type ReasoningOutputMode,
  SETTINGS,
  settingForFlag,
  type TransportMode,
  type UpstreamMode,
} from "./settings.js";
