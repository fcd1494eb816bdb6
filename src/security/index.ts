/**
 * Public API of the security area: the capability model, the gate, audit sinks and tool pinning.
 * Any name added here becomes public API.
 */
export {
  AUDIT_SPAN_EVENT,
  auditAttributes,
  combineAuditSinks,
  DEFAULT_AUDIT_CAPACITY,
  JsonLinesAuditSink,
  type JsonLinesAuditSinkOptions,
  MemoryAuditSink,
  type MemoryAuditSinkOptions,
  OpenTelemetryAuditSink,
  type OpenTelemetryAuditSinkOptions,
} from './audit.js';
export {
  DECISION_LOG_EVENT,
  OpenTelemetryLogAuditSink,
  type OpenTelemetryLogAuditSinkOptions,
} from './audit-log.js';
export {
  CapabilitySet,
  type CapabilitySetOptions,
  DEFAULT_CLOCK,
  DEFAULT_ON_WARNING,
} from './capability-set.js';
export { policyToCedar } from './cedar/export.js';
export { cedarSchemaPath } from './cedar/schema.js';
export type {
  ArgConstraint,
  ConditionFunction,
  ConditionInput,
  RuleCondition,
} from './conditions.js';
export {
  type AuditFailureMode,
  CapabilityGate,
  type CapabilityGateOptions,
  DEFAULT_AUDIT_FAILURE,
} from './gate.js';
export {
  MAX_PATTERN_LENGTH,
  MAX_RESOURCE_LENGTH,
  nativeToolResource,
  promptResource,
  resourceFor,
  resourceResource,
  SCHEME_ACTIONS,
  toolResource,
} from './pattern.js';
export {
  PIN_FILE_VERSION,
  type PinChange,
  type PinEntry,
  type PinFile,
  type PinnedToolDefinition,
  type PinStatus,
  PinStore,
  toolChangeDiff,
  toolDefinitionHash,
} from './pinning.js';
export {
  MAX_POLICY_RULES,
  POLICY_VERSION,
  type Policy,
  type PolicyRule,
  parsePolicy,
} from './policy.js';
export { DEFAULT_MATCH_CACHE_SIZE } from './rule-index.js';
export type { RuleInfo, RuleOptions } from './rules.js';
export {
  MAX_REGEX_INPUT_LENGTH,
  MAX_REGEX_REPEAT,
  MAX_REGEX_SOURCE_LENGTH,
} from './safe-regex.js';
export {
  ArgConstraintSchema,
  PolicyRuleSchema,
  PolicySchema,
  RuleConditionSchema,
} from './schemas.js';
export type {
  AccessRequest,
  Approver,
  AuditRecord,
  AuditSink,
  CheckContext,
  Decision,
  DecisionEffect,
  QuotaCounter,
  RuleEffect,
  ToolHints,
} from './types.js';
