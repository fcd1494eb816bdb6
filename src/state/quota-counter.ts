/**
 * Shared quotas when the store is away (issue 16, "failure behaviour"): a quota counter over a {@link StateStore}
 * that either fails closed (the default: a unit that cannot be counted is not given) or falls back to a
 * conservative local share. While the store is down, a process gives at most
 * `min(floor((limit - seen) / replicas), floor(limit / replicas) - own)` units per window, where `seen` is the
 * fleet's count the store last reported to this process and `own` the units the store gave this process in that
 * window. So the fleet stays within the limit as long as no process took more than its share before the outage.
 * Units given locally are charged to the store once it answers again, so a quota without a window still holds
 * over the outage.
 *
 * With `lease` (issue 41), units are taken from the store in blocks and spent locally (see quota-lease.ts); units
 * of a lease count as given to this process, so a local share during an outage includes them.
 */
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { QuotaCounter } from '../security/types.js';
import { toConfigIssues } from '../zod-issues.js';
import { QuotaLeaseSchema } from './options.js';
import { type GrantListener, LeaseBook } from './quota-lease.js';
import { type QuotaResult, type StateStore, StateUnavailableError } from './types.js';

/**
 * What a quota does when the store cannot answer: `'deny'` (fail closed), or `{ localShare: { replicas } }`, each
 * of `replicas` processes giving its share of what was left.
 */
export type QuotaFallback = 'deny' | { readonly localShare: { readonly replicas: number } };

/** Options of {@link FleetQuotaCounter}. */
export interface FleetQuotaCounterOptions {
  /** @default 'deny' */
  onUnavailable?: QuotaFallback | undefined;
  /** Time source of local windows, ms since the epoch. @default Date.now */
  clock?: (() => number) | undefined;
  /** Told each time a unit was decided locally because the store could not answer. */
  onFallback?: ((key: string, error: StateUnavailableError) => void) | undefined;
  /**
   * Leased units: take blocks of units from the store and decide locally, so most decisions need no round trip.
   * The store never grants more than the window has left, so the fleet stays within the quota; unspent units go
   * back on `close()`, after `idleMs` without a decision, or with their window. Needs a store that leases units
   * (`RedisStateStore`). Off by default: each decision is one round trip.
   */
  lease?: z.input<typeof QuotaLeaseSchema> | undefined;
}

/** Most keys whose local state is kept; the oldest are dropped beyond it. */
const MAX_TRACKED_KEYS = 10_000;

interface KeyState {
  window: number;
  /** The fleet's count the store last reported for this window. */
  seen: number;
  /** Units the store gave this process in this window. */
  own: number;
  /** Units given locally in this window. */
  local: number;
  /** Local units not yet charged to the store. */
  unsettled: number;
  /** The charge in flight, so two callers never charge the same units twice. */
  settling?: Promise<void> | undefined;
  /** Retries the charge while the store is away, so units are charged as soon as it answers, not on the next call. */
  retry?: NodeJS.Timeout | undefined;
}

/** How often units given locally are offered to the store again while it is away. */
const SETTLE_RETRY_MS = 200;

/** Checks a {@link QuotaFallback} (from options or a project file); throws `INVALID_CONFIG` naming the field. */
export function checkQuotaFallback(fallback: unknown, path = 'quotaFallback'): QuotaFallback {
  if (fallback === undefined || fallback === 'deny') return 'deny';
  const replicas = (fallback as { localShare?: { replicas?: unknown } } | null)?.localShare?.replicas;
  if (typeof replicas === 'number' && Number.isSafeInteger(replicas) && replicas >= 1) {
    return { localShare: { replicas } };
  }
  throw new ConfigError(
    `Invalid ${path}: use 'deny' or { localShare: { replicas: N } } with N the number of processes sharing the quota (a whole number, at least 1).`,
    { issues: [{ path, message: "'deny' or { localShare: { replicas: N } }" }] },
  );
}

/** A `quotaCounter` for `CapabilitySet` that counts in a shared store, with a chosen behaviour while it is down. */
export class FleetQuotaCounter implements QuotaCounter {
  readonly #store: StateStore;
  readonly #fallback: QuotaFallback;
  readonly #clock: () => number;
  readonly #onFallback: ((key: string, error: StateUnavailableError) => void) | undefined;
  readonly #keys = new Map<string, KeyState>();
  readonly #leases: LeaseBook | undefined;

  /** Throws `INVALID_CONFIG` for a bad fallback or lease, or a lease over a store that cannot lease units. */
  constructor(store: StateStore, options: FleetQuotaCounterOptions = {}) {
    this.#store = store;
    this.#fallback = checkQuotaFallback(options.onUnavailable, 'onUnavailable');
    this.#clock = options.clock ?? Date.now;
    this.#onFallback = options.onFallback;
    this.#leases = options.lease === undefined ? undefined : leaseBook(store, options.lease);
  }

  /** What this counter does while the store is down. */
  get fallback(): QuotaFallback {
    return this.#fallback;
  }

  consume(key: string, limit: number, windowMs?: number): Promise<QuotaResult> {
    // Failing closed, a lease needs no local state: most decisions are a unit of the lease, without an extra turn.
    if (this.#leases !== undefined && this.#fallback === 'deny')
      return this.#leases.consume(key, limit, windowMs);
    return this.#consume(key, limit, windowMs);
  }

  async #consume(key: string, limit: number, windowMs: number | undefined): Promise<QuotaResult> {
    const state = this.#state(key, windowMs);
    try {
      await this.#settle(key, limit, windowMs, state);
      if (this.#leases !== undefined) return await this.#leases.consume(key, limit, windowMs, granted(state));
      const result = await this.#store.consume(key, limit, windowMs);
      if (state !== undefined) {
        state.seen = Math.max(state.seen, result.used);
        if (result.allowed) state.own += 1;
      }
      return result;
    } catch (err) {
      if (!(err instanceof StateUnavailableError) || this.#fallback === 'deny' || state === undefined) {
        throw err;
      }
      this.#onFallback?.(key, err);
      const replicas = this.#fallback.localShare.replicas;
      const share = Math.min(
        Math.floor(Math.max(0, limit - state.seen) / replicas),
        Math.floor(limit / replicas) - state.own,
      );
      const used = state.seen + state.local;
      if (state.local >= share) return { allowed: false, used, limit, resetMs: undefined };
      state.local += 1;
      state.unsettled += 1;
      this.#settleLater(key, limit, windowMs, state);
      return { allowed: true, used: used + 1, limit, resetMs: undefined };
    }
  }

  /** Gives unspent leased units back to the store (the store itself stays open). Safe to call twice. */
  async close(): Promise<void> {
    await this.#leases?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Charges the units given locally during an outage, once the store answers (same window only). */
  #settle(key: string, limit: number, windowMs: number | undefined, state: KeyState | undefined) {
    if (state === undefined || state.unsettled === 0) return Promise.resolve();
    state.settling ??= (async () => {
      try {
        const units = state.unsettled;
        await Promise.all(Array.from({ length: units }, () => this.#store.consume(key, limit, windowMs)));
        state.unsettled -= units;
      } finally {
        state.settling = undefined;
      }
    })();
    return state.settling;
  }

  /**
   * Keeps offering the local units to the store until it takes them. Until every process has charged its units
   * the fleet's count lags by the units not yet charged; retrying in the background keeps that window to about
   * {@link SETTLE_RETRY_MS} after the store answers again instead of until each process's next call.
   */
  #settleLater(key: string, limit: number, windowMs: number | undefined, state: KeyState): void {
    if (state.retry !== undefined) return;
    state.retry = setInterval(() => {
      // A new window began (or the key was evicted): the old window's units are no longer charged.
      if (this.#keys.get(key) !== state) {
        clearInterval(state.retry);
        state.retry = undefined;
        return;
      }
      this.#settle(key, limit, windowMs, state).then(
        () => {
          if (state.unsettled === 0) {
            clearInterval(state.retry);
            state.retry = undefined;
          }
        },
        () => {},
      );
    }, SETTLE_RETRY_MS);
    state.retry.unref();
  }

  /** The local state of `key` in the current window; none in `'deny'` mode (nothing is tracked). */
  #state(key: string, windowMs: number | undefined): KeyState | undefined {
    if (this.#fallback === 'deny') return undefined;
    const window = windowMs === undefined ? 0 : Math.floor(this.#clock() / windowMs);
    let state = this.#keys.get(key);
    if (state === undefined || state.window !== window) {
      state = { window, seen: 0, own: 0, local: 0, unsettled: 0 };
      this.#keys.delete(key);
      if (this.#keys.size >= MAX_TRACKED_KEYS) {
        const oldest = this.#keys.keys().next().value;
        if (oldest !== undefined) this.#keys.delete(oldest);
      }
      this.#keys.set(key, state);
    }
    return state;
  }
}

/** Records each grant of a lease in the fallback's state: the fleet's count, and the units given to this process. */
function granted(state: KeyState | undefined): GrantListener | undefined {
  if (state === undefined) return undefined;
  return (units, used) => {
    state.seen = Math.max(state.seen, used);
    state.own += units;
  };
}

/** The leases of a counter, checked once: valid settings over a store that leases units. */
function leaseBook(store: StateStore, lease: unknown): LeaseBook {
  const parsed = QuotaLeaseSchema.safeParse(lease);
  if (!parsed.success) {
    const issues = toConfigIssues(parsed.error, 'lease');
    throw new ConfigError(`Invalid lease: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}.`, {
      issues,
    });
  }
  if (store.lease === undefined || store.returnLease === undefined) {
    throw new ConfigError(
      'Invalid lease: this state store cannot lease quota units; leases need a RedisStateStore.',
      { issues: [{ path: 'lease', message: 'needs a store that leases units (RedisStateStore)' }] },
    );
  }
  return new LeaseBook(store as ConstructorParameters<typeof LeaseBook>[0], parsed.data);
}
