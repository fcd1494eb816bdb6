// The `mcp-interlock/state` entry: shared state for a fleet of processes (issue 16). Any new export here is public.

export {
  type AuditStreamTrail,
  readAuditStream,
  StreamAuditSink,
  type StreamAuditSinkOptions,
} from './audit-stream.js';
export { MemoryStateStore, type MemoryStateStoreOptions } from './memory.js';
export {
  type RedisStateStoreOptions,
  RedisStateStoreOptionsSchema,
} from './options.js';
export {
  FleetQuotaCounter,
  type FleetQuotaCounterOptions,
} from './quota-counter.js';
export { RedisStateStore } from './redis.js';
export { SharedPins, type SharedPinsOptions } from './shared-pins.js';
export { SharedPolicy, type SharedPolicyOptions } from './shared-policy.js';
export {
  PolicyNotAppliedError,
  type QuotaResult,
  StateInvalidError,
  type StateStore,
  StateUnavailableError,
} from './types.js';
