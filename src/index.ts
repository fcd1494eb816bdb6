// The package root, `mcp-interlock`: the errors every area throws, and their codes. Each area has its own entry
// point for the rest (`mcp-interlock/interop`, `mcp-interlock/engine`, `mcp-interlock/security`, ...), and each
// public name is exported by exactly one entry point (issue 43; docs/architecture.md, "Entry points").

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
