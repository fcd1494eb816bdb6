/**
 * Shared quotas when the store is away (issue 16, "failure behaviour"): a quota counter over a {@link StateStore}
 * that either fails closed (the default: a unit that cannot be counted is not given) or falls back to a
 * conservative local share. While the store is down, a process gives at most
 * `min(floor((limit - seen) / replicas), floor(limit / replicas) - own)` units per window, where `seen` is the
 * fleet's count the store last reported to this process and `own` the units the store gave this process in that
 * window. So the fleet stays within the limit as long as no process took more than its share before the outage.
 * Units given locally are charged to the store once it answers again, so a quota without a window still holds
 * over the outage.
 */
import { ConfigError } from '../errors.js';
import type { QuotaCounter } from '../security/types.js';
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
}

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

  constructor(store: StateStore, options: FleetQuotaCounterOptions = {}) {
    this.#store = store;
    this.#fallback = checkQuotaFallback(options.onUnavailable, 'onUnavailable');
    this.#clock = options.clock ?? Date.now;
    this.#onFallback = options.onFallback;
  }

  /** What this counter does while the store is down. */
  get fallback(): QuotaFallback {
    return this.#fallback;
  }

  async consume(key: string, limit: number, windowMs?: number): Promise<QuotaResult> {
    const state = this.#state(key, windowMs);
    try {
      await this.#settle(key, limit, windowMs, state);
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
      return { allowed: true, used: used + 1, limit, resetMs: undefined };
    }
  }

  /** Charges the units given locally during an outage, once the store answers (same window only). */
  async #settle(key: string, limit: number, windowMs: number | undefined, state: KeyState | undefined) {
    if (state === undefined || state.unsettled === 0) return;
    const units = state.unsettled;
    await Promise.all(Array.from({ length: units }, () => this.#store.consume(key, limit, windowMs)));
    state.unsettled -= units;
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
