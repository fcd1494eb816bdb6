// The package root: the names most apps need. Each area also has its own entry point
// (`mcp-interlock/interop`, `mcp-interlock/security`, `mcp-interlock/tools`, `mcp-interlock/session`).

export {
  Agent,
  type AgentOptions,
  defineTool,
  Engine,
  type EngineOptions,
  type RunResult,
} from './engine/index.js';
export {
  AuditError,
  AuthError,
  type AuthFailureReason,
  ClosedError,
  ConfigError,
  type ConfigIssue,
  ConnectionError,
  ConnectionLostError,
  ErrorCode,
  InterlockError,
  isInterlockError,
  NotConnectedError,
  OverloadedError,
  PermissionDeniedError,
  PolicyError,
  PolicyReviewError,
  RequestCancelledError,
  RequestTimeoutError,
  ServerRequestError,
  ServerRequestRefusedError,
  ToolDefinitionChangedError,
  ToolInputError,
  ToolNotFoundError,
  ToolOutputError,
  ToolSchemaError,
} from './errors.js';
export {
  loadMCPConfig,
  MCPClientManager,
  type MCPClientManagerOptions,
  type MCPServerConfig,
  type MCPServerConfigInput,
} from './interop/index.js';
export { CapabilitySet, type Decision, MemoryAuditSink } from './security/index.js';
export { mcpResultToString, type ToolCallResult, ToolWrapper } from './tools/index.js';
