/**
 * Leased quota units (issue 41): a process takes a block of a shared quota's units from the store at once and
 * spends them locally, so most decisions need no round trip. The store never grants more than the window has left,
 * so the fleet's total stays within the quota; unspent units go back when the process closes, when a lease sits
 * idle, or (by themselves) when the window ends. Refills start ahead of need, one in flight per key; callers that
 * find the lease empty wait on that refill instead of each calling the store.
 */
import { type QuotaLease, type QuotaResult, type StateStore, StateUnavailableError } from './types.js';

/** Settings of leased units (after validation). */
interface LeaseSettings {
  /** Most units one lease asks for. */
  readonly maxBlock: number;
  /** Unspent units go back to the fleet after this long without a decision on their key. */
  readonly idleMs: number;
}

/** Told of every grant, so the fallback knows what the fleet and this process had when the store went away. */
export type GrantListener = (granted: number, used: number) => void;

interface Lease {
  readonly limit: number;
  readonly windowMs: number | undefined;
  /** The store's window the units belong to (0 without a window). */
  window: number;
  /** Units leased and not spent yet. */
  units: number;
  /** Until when (local clock) the units may be spent: the end of their window, at the latest. */
  expiresAt: number;
  /** The fleet's count at the last grant. */
  seen: number;
  /** How many units the next refill asks for. */
  block: number;
  /** Callers waiting for units. */
  waiting: number;
  /** Units asked for since the refill in flight started: the demand during one round trip. */
  demand: number;
  /** The refill in flight, if any. */
  refill: Promise<QuotaLease> | undefined;
  /** When a decision last took one of the units. */
  lastUse: number;
  idle: NodeJS.Timeout | undefined;
}

/** Most keys whose lease is kept; the oldest are given back beyond it. */
const MAX_LEASED_KEYS = 10_000;

/** The leases of one quota counter: one per key. */
export class LeaseBook {
  readonly #store: StateStore & Required<Pick<StateStore, 'lease' | 'returnLease'>>;
  readonly #settings: LeaseSettings;
  readonly #leases = new Map<string, Lease>();
  readonly #returning = new Set<Promise<unknown>>();
  #closed = false;

  constructor(
    store: StateStore & Required<Pick<StateStore, 'lease' | 'returnLease'>>,
    settings: LeaseSettings,
  ) {
    this.#store = store;
    this.#settings = settings;
  }

  /** Spends one unit of `key`, from the lease or from a refill; fails with the store's error when it cannot refill. */
  consume(
    key: string,
    limit: number,
    windowMs: number | undefined,
    onGrant?: GrantListener,
  ): Promise<QuotaResult> {
    if (this.#closed) return Promise.reject(new StateUnavailableError('The quota counter is closed.'));
    let lease = this.#leases.get(key);
    if (lease !== undefined && (lease.limit !== limit || lease.windowMs !== windowMs)) {
      // The rule changed: its units were leased under another limit or window.
      this.#giveBack(key, lease);
      lease = undefined;
    }
    lease ??= this.#open(key, limit, windowMs);
    // Most decisions: a unit of the lease, no round trip and no extra turn of the event loop.
    return Promise.resolve(this.#take(key, lease, onGrant) ?? this.#wait(key, lease, onGrant));
  }

  /** One unit of the lease, if it has one in its window. */
  #take(key: string, lease: Lease, onGrant: GrantListener | undefined): QuotaResult | undefined {
    if (lease.units === 0) return undefined;
    const now = Date.now();
    if (now >= lease.expiresAt) {
      lease.units = 0; // the window ended: its units are gone
      return undefined;
    }
    lease.units -= 1;
    lease.lastUse = now;
    if (lease.refill !== undefined) lease.demand += 1;
    // Ahead of need: the next block is asked for while half of this one is still there.
    if (lease.refill === undefined && lease.units <= lease.block >> 1) {
      this.#refill(key, lease, onGrant).catch(() => {});
    }
    const resetMs = lease.windowMs === undefined ? undefined : Math.max(0, lease.expiresAt - now);
    return { allowed: true, used: lease.seen - lease.units, limit: lease.limit, resetMs };
  }

  /** Waits on the refill in flight (or starts one) until a unit is there or the store has none left. */
  async #wait(key: string, lease: Lease, onGrant: GrantListener | undefined): Promise<QuotaResult> {
    lease.demand += 1;
    for (;;) {
      lease.waiting += 1;
      let grant: QuotaLease;
      try {
        grant = await (lease.refill ?? this.#refill(key, lease, onGrant));
      } finally {
        lease.waiting -= 1;
      }
      if (grant.granted === 0) {
        return { allowed: false, used: grant.used, limit: lease.limit, resetMs: grant.resetMs };
      }
      // Units arrived: take one (or, if other callers took them all first, wait on the next refill).
      const taken = this.#take(key, lease, onGrant);
      if (taken !== undefined) return taken;
      if (this.#closed) throw new StateUnavailableError('The quota counter is closed.');
    }
  }

  /** Gives every unspent unit back to the store; resolves once the store took them (or could not). */
  async close(): Promise<void> {
    this.#closed = true;
    // Units still on their way are given back too.
    await Promise.allSettled([...this.#leases.values()].map((lease) => lease.refill));
    for (const [key, lease] of this.#leases) this.#giveBack(key, lease);
    await Promise.allSettled([...this.#returning]);
  }

  #open(key: string, limit: number, windowMs: number | undefined): Lease {
    if (this.#leases.size >= MAX_LEASED_KEYS) {
      const [oldestKey, oldest] = this.#leases.entries().next().value as [string, Lease];
      this.#giveBack(oldestKey, oldest);
    }
    const lease: Lease = {
      limit,
      windowMs,
      window: 0,
      units: 0,
      expiresAt: 0,
      seen: 0,
      block: 1,
      waiting: 0,
      demand: 0,
      refill: undefined,
      lastUse: 0,
      idle: undefined,
    };
    this.#leases.set(key, lease);
    return lease;
  }

  /** One refill of `key` (the caller made sure none is in flight). */
  #refill(key: string, lease: Lease, onGrant: GrantListener | undefined): Promise<QuotaLease> {
    const sent = Date.now();
    lease.demand = 0;
    const refill = this.#store.lease(key, lease.limit, lease.block, lease.windowMs).then(
      (grant) => {
        lease.refill = undefined;
        lease.seen = grant.used;
        if (grant.granted === 0) return grant;
        onGrant?.(grant.granted, grant.used);
        if (!this.#closed && this.#leases.get(key) !== lease) {
          // Dropped meanwhile: the callers waiting take theirs, the rest goes back right after.
          setImmediate(() => this.#giveBack(key, lease, false));
        }
        // Measured from before the request, so the units expire no later than their window does in the store.
        const expiresAt = grant.resetMs === undefined ? Number.POSITIVE_INFINITY : sent + grant.resetMs;
        if (grant.window !== lease.window) lease.units = 0; // a new window: the old one's units are gone
        lease.window = grant.window;
        lease.expiresAt = expiresAt;
        lease.units += grant.granted;
        // The next block covers the demand of four round trips like this one (refills start at half a block, so
        // one twice as slow still finds units), and at least doubles while callers waited for these.
        const need = 4 * lease.demand;
        lease.block = Math.min(
          this.#settings.maxBlock,
          Math.max(1, need, lease.waiting > 0 ? lease.block * 2 : 0),
        );
        this.#watchIdle(key, lease);
        return grant;
      },
      (err: unknown) => {
        lease.refill = undefined;
        throw err;
      },
    );
    lease.refill = refill;
    return refill;
  }

  /** Gives the units back once no decision took one for `idleMs`, so a quiet process strands nothing for long. */
  #watchIdle(key: string, lease: Lease): void {
    if (lease.idle !== undefined) return;
    const check = () => {
      lease.idle = undefined;
      if (this.#leases.get(key) !== lease || lease.units === 0) return;
      const quiet = Date.now() - lease.lastUse;
      if (quiet < this.#settings.idleMs || lease.refill !== undefined) {
        lease.idle = setTimeout(check, Math.max(1, this.#settings.idleMs - quiet));
        lease.idle.unref();
        return;
      }
      // A quiet key needs smaller blocks.
      lease.block = Math.max(1, lease.block >> 1);
      this.#giveBack(key, lease, false);
    };
    lease.idle = setTimeout(check, this.#settings.idleMs);
    lease.idle.unref();
  }

  /** Returns the unspent units to the store (when their window is not over); `forget` drops the lease too. */
  #giveBack(key: string, lease: Lease, forget = true): void {
    if (forget) {
      this.#leases.delete(key);
      clearTimeout(lease.idle);
      lease.idle = undefined;
    }
    const units = Date.now() < lease.expiresAt ? lease.units : 0;
    lease.units = 0;
    if (units === 0) return;
    // If the store cannot take them now, they stay counted in their window: safe, only stranded.
    const back = this.#store.returnLease(key, units, lease.window, lease.windowMs).catch(() => 0);
    this.#returning.add(back);
    void back.finally(() => this.#returning.delete(back));
  }
}
