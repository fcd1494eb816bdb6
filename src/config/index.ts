// Public API of the config area: the project file (`interlock.config.yaml` / `.json`), mcp.json files and config
// to HTTP settings. Any name added here becomes public API.

export { expandEnv } from './env.js';
export type { FileIssue } from './file-issues.js';
export {
  createHttpClientFromConfig,
  type HttpSettingsConfig,
  httpOptionsFromConfig,
  httpSettingsFromConfig,
  readTlsConfig,
  serverHttpOverrides,
} from './http.js';
export { CONFIG_SCHEMA_PATH, configJsonSchema } from './json-schema.js';
export {
  findConfigFile,
  type InterlockConfig,
  type LoadInterlockConfigOptions,
  loadInterlockConfig,
  loadPolicyFile,
  type StateConfig,
} from './load.js';
export { type LoadMCPConfigOptions, loadMCPConfig, parseMCPConfig } from './mcp-json.js';
export {
  CONFIG_VERSION,
  DEFAULT_AGENT,
  DEFAULT_CONFIG_FILES,
  DEFAULT_PINS_FILE,
  type InterlockConfigInput,
  InterlockConfigSchema,
  ServerEntrySchema,
  StateConfigSchema,
} from './schema.js';
export { createMasker, MIN_SECRET_LENGTH } from './secrets.js';
export {
  POLICY_WATCH_DEBOUNCE_MS,
  type PolicyWatch,
  type WatchPolicyFileOptions,
  watchPolicyFile,
} from './watch.js';
