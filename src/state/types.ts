/**
 * The state store (issue 16): what the gate shares between processes and hosts. The embedded default keeps it in
 * memory; `RedisStateStore` keeps it in Redis (or Valkey) so that quotas, revocations, pins and tokens hold across
 * a fleet. Every operation is bounded in time: a store that cannot answer fails with `STATE_UNAVAILABLE`, never
 * hangs.
 */
import { ErrorCode, InterlockError, type InterlockErrorOptions } from '../errors.js';

/** The answer of {@link StateStore.consume}. */
export interface QuotaResult {
  /** Whether this call got a unit (fewer than `limit` were used in the window before it). */
  readonly allowed: boolean;
  /** Units used in the current window, this one included when it was allowed. */
  readonly used: number;
  readonly limit: number;
  /** Milliseconds until the current window ends (the store's clock); undefined without a window. */
  readonly resetMs: number | undefined;
}

/** The answer of {@link StateStore.lease}: a block of a quota's units for one process to spend by itself. */
export interface QuotaLease {
  /** Units granted (0: none were left in the window). */
  readonly granted: number;
  /** Units taken of the key in the window, the granted ones included. */
  readonly used: number;
  /** Milliseconds until the window ends (the store's clock); undefined without a window. */
  readonly resetMs: number | undefined;
  /** The window the units belong to (0 without a window): give unused ones back to this window. */
  readonly window: number;
}

/** A message listener of {@link StateStore.subscribe}. */
export type StateListener = (message: string) => void;

/** Options of {@link StateStore.withLock}. */
export interface LockOptions {
  /** How long the lock holds if its holder dies without releasing it. @default 10 000 ms */
  ttlMs?: number | undefined;
  /** How long to wait for another holder before failing with `STATE_UNAVAILABLE`. @default 30 000 ms */
  waitMs?: number | undefined;
}

/** Shared state: atomic windowed counters, values, pub/sub, locks with expiry, and append-only streams. */
export interface StateStore extends AsyncDisposable {
  /**
   * Takes one unit of `key` when fewer than `limit` were taken in the current window (`windowMs`; none: for
   * ever), atomically across every process sharing the store, by the store's own clock.
   */
  consume(key: string, limit: number, windowMs?: number): Promise<QuotaResult>;
  /**
   * Takes up to `want` units of `key` at once, never more than the window has left, atomically across every
   * process (the count is the one {@link consume} keeps). The grant shrinks as the window runs low, down to one
   * unit, so the units left are spread over the processes that ask. Optional: a quota counter over a store
   * without it takes one unit per call.
   */
  lease?(key: string, limit: number, want: number, windowMs?: number): Promise<QuotaLease>;
  /**
   * Gives back `units` leased and not spent in window `window` of `key`; nothing when that window is over.
   * Resolves to the units given back.
   */
  returnLease?(key: string, units: number, window: number, windowMs?: number): Promise<number>;
  /** Units taken of `key` in the current window, without taking one. */
  used(key: string, windowMs?: number): Promise<number>;
  get(key: string): Promise<string | undefined>;
  /** Sets a value, optionally expiring after `ttlMs`. */
  set(key: string, value: string, options?: { ttlMs?: number | undefined }): Promise<void>;
  /**
   * Sets `key` to `value` only if it holds exactly `expected` (`undefined`: only if it holds nothing), atomically
   * across every process: the write of a read-modify-write that no concurrent write can slip between (issue 38).
   * Resolves to whether it was written.
   */
  compareAndSet(key: string, expected: string | undefined, value: string): Promise<boolean>;
  /**
   * Records `member` of `group` with `value`, live for `ttlMs` by the store's clock (a heartbeat renews it):
   * membership by heartbeat, so a process that died drops out by itself.
   */
  putMember(group: string, member: string, value: string, ttlMs: number): Promise<void>;
  /** The live members of `group` and their values (members whose heartbeat expired are left out and removed). */
  members(group: string): Promise<Map<string, string>>;
  /** Removes `member` from `group` (a process that leaves cleanly). */
  removeMember(group: string, member: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** Sends `message` to every subscriber of `channel`, in every process. */
  publish(channel: string, message: string): Promise<void>;
  /** Listens on `channel` until the returned function is called. */
  subscribe(channel: string, listener: StateListener): Promise<() => Promise<void>>;
  /** Runs `fn` while holding the lock `name`: one holder at a time across processes; others wait. */
  withLock<T>(name: string, fn: () => Promise<T>, options?: LockOptions): Promise<T>;
  /** Appends a record to a bounded stream (the newest `maxLength` are kept). */
  append(stream: string, record: Readonly<Record<string, string>>, maxLength?: number): Promise<void>;
  /** Closes connections; safe to call twice. */
  close(): Promise<void>;
}

/** How long a lock holds by default. */
export const DEFAULT_LOCK_TTL_MS = 10_000;
/** How long a caller waits for a lock by default. */
export const DEFAULT_LOCK_WAIT_MS = 30_000;
/** How many records a stream keeps by default. */
export const DEFAULT_STREAM_MAX_LENGTH = 100_000;

/** The store could not answer: unreachable, timed out, or an error from the server. */
export class StateUnavailableError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.STATE_UNAVAILABLE, message, options);
  }
}

/** Throws `INVALID_CONFIG`-free programming errors early: a limit or window that is not a positive integer. */
export function checkQuotaArgs(limit: number, windowMs: number | undefined): void {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (windowMs !== undefined && (!Number.isSafeInteger(windowMs) || windowMs < 1)) {
    throw new RangeError(`windowMs must be a positive integer, got ${windowMs}`);
  }
}

/** A document read from the store is invalid (garbage, wrong shape, a bad revision): not used, fails closed. */
export class StateInvalidError extends InterlockError {
  constructor(message: string, options: InterlockErrorOptions = {}) {
    super(ErrorCode.STATE_INVALID, message, options);
  }
}

/**
 * A shared policy revision is in the store but some live processes did not apply it in time (issue 38). Those
 * processes refuse every call until they apply it; `pending` names them.
 */
export class PolicyNotAppliedError extends InterlockError {
  /** The revision that was written. */
  readonly version: number;
  /** The processes (their member names) that had not applied it. */
  readonly pending: readonly string[];

  constructor(
    message: string,
    options: InterlockErrorOptions & { version: number; pending: readonly string[] },
  ) {
    super(ErrorCode.POLICY_NOT_APPLIED, message, options);
    this.version = options.version;
    this.pending = Object.freeze([...options.pending]);
  }
}
