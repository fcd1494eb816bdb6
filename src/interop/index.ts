// Public API of the interop area: the manager, what you hand it (its options and the server configs, which
// src/config owns) and what it hands back. Any name added here becomes public API; each public name is exported
// by exactly one entry point (issue 43): the HTTP stack is `mcp-interlock/net`, config files `mcp-interlock/config`.

export {
  type AutoServerConfig,
  DEFAULT_CONNECT_TIMEOUT_MS,
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
export type { ConnectionState, ServerConnectionInfo } from './connection.js';
export type { ServerHealth } from './connection-registry.js';
export { type FormField, formFields, type UrlElicitationRequest } from './elicitation.js';
export type { MCPManagerEvents, ToolCallCompletion, ToolCallDenial, ToolCallFailure } from './events.js';
export { type Logger, silentLogger } from './logger.js';
export {
  type CapabilityView,
  type CapabilityViewOptions,
  MCPClientManager,
  type MCPClientManagerOptions,
} from './manager.js';
export type { ServerAuthFactory } from './open-client.js';
export type { ServerLogEntry } from './server-logs.js';
export type {
  ElicitationHandler,
  RootsOption,
  SamplingHandler,
  ServerRequestContext,
  ServerRequestOptions,
  UrlElicitationHandler,
} from './server-requests.js';
