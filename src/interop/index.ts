// Public API of the interop area. Any name added here becomes public API.

export { expandEnv } from '../config/env.js';
// mcp.json files and config-to-HTTP live in src/config, the HTTP stack in src/net (issue 15); their names stay
// available here, where users import them.
export {
  createHttpClientFromConfig,
  httpOptionsFromConfig,
  readTlsConfig,
  serverHttpOverrides,
} from '../config/http.js';
export { type LoadMCPConfigOptions, loadMCPConfig, parseMCPConfig } from '../config/mcp-json.js';
export {
  type AutoServerConfig,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_RECONNECT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type HeadersHelperConfig,
  HeadersHelperSchema,
  type HttpConfig,
  HttpConfigSchema,
  type HttpServerConfig,
  type MCPServerConfig,
  type MCPServerConfigInput,
  MCPServerConfigSchema,
  type NetworkConfig,
  NetworkConfigSchema,
  type OAuthConfig,
  OAuthConfigSchema,
  parseServerConfig,
  parseServerConfigs,
  type ReconnectOptions,
  ReconnectSchema,
  type ServerProxyConfig,
  ServerProxySchema,
  type ServerTlsConfig,
  ServerTlsSchema,
  type SseServerConfig,
  type StdioServerConfig,
  type ToolFilter,
  ToolFilterSchema,
  type TransportKind,
} from '../config/servers.js';
export {
  type CreateHttpClientOptions,
  createDispatcher,
  createHttpClient,
  DEFAULT_CONNECTIONS_PER_ORIGIN,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  type HttpClient,
  type HttpOptions,
  type HttpProxyOption,
  type HttpTlsOptions,
  MAX_REDIRECTS,
  type ServerHttpOverrides,
} from '../net/http.js';
export {
  type AddressKind,
  classifyAddress,
  DEFAULT_NETWORK_POLICY,
  METADATA_ADDRESSES,
  NetworkGuard,
  type NetworkPolicy,
  NetworkPolicyError,
  type NetworkRefusal,
  type Resolver,
} from '../net/network.js';
export { envProxyRoutes, type ProxyRoutes, proxyFor } from '../net/proxy-tunnel.js';
export {
  MAX_INPUT_REQUESTS_PER_ROUND,
  MAX_INPUT_ROUNDS,
  MAX_REQUEST_STATE_CHARS,
  STDERR_LINES_KEPT,
} from '../protocol/bounds.js';
export { DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_MESSAGE_BYTES } from '../protocol/stdio-transport.js';
export type { ClientIdentity } from '../protocol/transport.js';
export type { BlockedToolChange } from './catalog-reporter.js';
export type { ConnectionState, ServerConnectionInfo } from './connection.js';
export type { ServerHealth } from './connection-registry.js';
export {
  checkElicitationUrl,
  type FormField,
  type FormOption,
  formFields,
  MAX_ELICITATION_URL_LENGTH,
  type UrlCheck,
  type UrlElicitationRequest,
  withSchemaDefaults,
} from './elicitation.js';
export type {
  MCPManagerEventName,
  MCPManagerEvents,
  ToolCallCompletion,
  ToolCallDenial,
  ToolCallFailure,
} from './events.js';
export { consoleLogger, type Logger, silentLogger } from './logger.js';
export {
  type CapabilityView,
  type CapabilityViewOptions,
  CLIENT_VERSION,
  MCPClientManager,
  type MCPClientManagerOptions,
} from './manager.js';
export type { ServerAuth, ServerAuthFactory } from './open-client.js';
export {
  LOG_LEVELS,
  MAX_SERVER_LOG_CHARS,
  type ServerLogEntry,
} from './server-logs.js';
export {
  type ElicitationHandler,
  REQUEST_REJECTED_CODE,
  type RootsOption,
  type SamplingHandler,
  type ServerRequestContext,
  type ServerRequestKind,
  type ServerRequestOptions,
  type UrlElicitationHandler,
  type UrlElicitationResult,
} from './server-requests.js';
export type { CallHealth } from './stats.js';
