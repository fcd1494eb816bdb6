/**
 * Public API of the security area: the capability model, the gate, audit sinks and tool pinning.
 * Any name added here becomes public API.
 */
export {
  combineAuditSinks,
  JsonLinesAuditSink,
  type JsonLinesAuditSinkOptions,
  MemoryAuditSink,
  type MemoryAuditSinkOptions,
  OpenTelemetryAuditSink,
  type OpenTelemetryAuditSinkOptions,
} from './audit.js';
export type {
  AuditChainLink,
  AuditChainOptions,
  AuditCheckpoint,
  AuditVerifyKey,
} from './audit-chain.js';
export {
  OpenTelemetryLogAuditSink,
  type OpenTelemetryLogAuditSinkOptions,
} from './audit-log.js';
export {
  type AuditChainSummary,
  type AuditFinding,
  type AuditFindingKind,
  type AuditTrailEntry,
  type AuditVerifyReport,
  parseAuditLines,
  type VerifyAuditChainOptions,
  verifyAuditChain,
} from './audit-verify.js';
export {
  CapabilitySet,
  type CapabilitySetOptions,
} from './capability-set.js';
export { policyToCedar } from './cedar/export.js';
export { cedarSchemaPath } from './cedar/schema.js';
export type {
  ArgConstraint,
  ConditionFunction,
  RuleCondition,
} from './conditions.js';
// Issue 42. The rest of the flow types are reachable structurally (`Decision['flow']`, `FlowLabels['labelsFor']`):
// the public surface has a budget (test/public-api.test.ts, issue 43).
export { FlowState, type FlowStateOptions } from './flow.js';
export { FlowLabels, type TargetLabels } from './flow-labels.js';
export {
  type AuditFailureMode,
  CapabilityGate,
  type CapabilityGateOptions,
} from './gate.js';
export { resourceFor } from './pattern.js';
export {
  type PinChange,
  type PinStatus,
  PinStore,
  toolChangeDiff,
  toolDefinitionHash,
} from './pinning.js';
export {
  type Policy,
  type PolicyRule,
  parsePolicy,
} from './policy.js';
export {
  DecisionRecorder,
  type DecisionRecorderOptions,
  type RecordedDecision,
  type RecordedValue,
} from './recording.js';
export {
  type FlipKind,
  type Recording,
  type ReplayExample,
  type ReplayGroup,
  type ReplayOptions,
  type ReplayOutcome,
  type ReplayReport,
  readRecording,
  replayRecording,
} from './replay.js';
export { DEFAULT_MATCH_CACHE_SIZE } from './rule-index.js';
export type { RuleInfo, RuleOptions } from './rules.js';
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
} from './types.js';
