// Public API of the config area: the project file (`interlock.config.yaml` / `.json`), mcp.json files and config
// to HTTP settings. Any name added here becomes public API.

export { expandEnv } from './env.js';
export {
  createHttpClientFromConfig,
  httpOptionsFromConfig,
  serverHttpOverrides,
} from './http.js';
export { configJsonSchema } from './json-schema.js';
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
  type InterlockConfigInput,
  InterlockConfigSchema,
} from './schema.js';
export {
  type PolicyWatch,
  type WatchPolicyFileOptions,
  watchPolicyFile,
} from './watch.js';
