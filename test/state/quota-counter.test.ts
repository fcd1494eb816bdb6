/**
 * `FleetQuotaCounter` (issue 16): what a shared quota does while its store cannot answer. The store here is a
 * `MemoryStateStore` behind a switch that makes it answer `STATE_UNAVAILABLE`, as a Redis store does while down.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStateStore } from '../../src/state/memory.js';
import { FleetQuotaCounter } from '../../src/state/quota-counter.js';
import { StateUnavailableError } from '../../src/state/types.js';

/** A store that can be switched off: while off, `consume` fails as an unreachable Redis does. */
function switchable(): { store: MemoryStateStore; down: { value: boolean } } {
  const store = new MemoryStateStore();
  const down = { value: false };
  const consume = store.consume.bind(store);
  store.consume = (key, limit, windowMs) =>
    down.value ? Promise.reject(new StateUnavailableError('Redis is down.')) : consume(key, limit, windowMs);
  return { store, down };
}

async function take(counter: FleetQuotaCounter, n: number, limit: number, windowMs?: number) {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) out.push((await counter.consume('k', limit, windowMs)).allowed);
  return out;
}

describe('FleetQuotaCounter', () => {
  it('fails closed by default: the store error reaches the gate, which denies', async () => {
    const { store, down } = switchable();
    const counter = new FleetQuotaCounter(store);
    await take(counter, 1, 10);
    down.value = true;
    await expect(counter.consume('k', 10)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
  });

  it('a local share gives at most its part while the store is down, then charges it when the store is back', async () => {
    const { store, down } = switchable();
    const fallbacks: string[] = [];
    const counter = new FleetQuotaCounter(store, {
      onUnavailable: { localShare: { replicas: 2 } },
      onFallback: (key) => fallbacks.push(key),
    });
    expect(await take(counter, 3, 10)).toEqual([true, true, true]);
    down.value = true;
    // Its share of 10 over 2 replicas is 5, and it had 3 of them: 2 more, locally.
    expect(await take(counter, 4, 10)).toEqual([true, true, false, false]);
    expect(fallbacks).toHaveLength(4);
    down.value = false;
    await counter.consume('k', 10);
    // The 2 local units were charged before this one.
    expect(await store.used('k')).toBe(6);
  });

  it('a local share is also bounded by what the fleet had left when last heard from', async () => {
    const { store, down } = switchable();
    const other = new FleetQuotaCounter(store);
    await take(other, 8, 10);
    const counter = new FleetQuotaCounter(store, { onUnavailable: { localShare: { replicas: 2 } } });
    expect(await take(counter, 1, 10)).toEqual([true]);
    down.value = true;
    // 10 - 9 seen = 1 left, over 2 replicas: nothing for this process.
    expect(await take(counter, 2, 10)).toEqual([false, false]);
  });

  it('refuses a bad fallback with INVALID_CONFIG', () => {
    const store = new MemoryStateStore();
    expect(() => new FleetQuotaCounter(store, { onUnavailable: { localShare: { replicas: 1.5 } } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });
});
