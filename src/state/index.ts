// The `mcp-interlock/state` entry: shared state for a fleet of processes (issue 16). Any new export here is public.

export {
  type AuditStreamTrail,
  readAuditStream,
  StreamAuditSink,
  type StreamAuditSinkOptions,
} from './audit-stream.js';
export { MemoryStateStore, type MemoryStateStoreOptions } from './memory.js';
export {
  DEFAULT_KEY_PREFIX,
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
  type RedisStateStoreOptions,
  RedisStateStoreOptionsSchema,
} from './options.js';
export {
  checkQuotaFallback,
  FleetQuotaCounter,
  type FleetQuotaCounterOptions,
  type QuotaFallback,
} from './quota-counter.js';
export { RedisStateStore } from './redis.js';
export { DEFAULT_PINS_POLL_MS, SharedPins, type SharedPinsOptions } from './shared-pins.js';
export { DEFAULT_POLICY_LEASE_MS, SharedPolicy, type SharedPolicyOptions } from './shared-policy.js';
export {
  DEFAULT_LOCK_TTL_MS,
  DEFAULT_LOCK_WAIT_MS,
  DEFAULT_STREAM_MAX_LENGTH,
  type LockOptions,
  PolicyNotAppliedError,
  type QuotaResult,
  StateInvalidError,
  type StateListener,
  type StateStore,
  StateUnavailableError,
} from './types.js';
