/**
 * Leased quota units (issue 41): a `FleetQuotaCounter` with `lease` takes blocks of units from a real redis-server
 * and decides locally. Counters (and processes) racing on one key never get more than the quota between them, every
 * unit is reachable, unspent units go back, a window's units die with it, and a counter that cannot refill refuses.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { MemoryStateStore } from '../../src/state/memory.js';
import { FleetQuotaCounter } from '../../src/state/quota-counter.js';
import { RedisStateStore } from '../../src/state/redis.js';
import type { QuotaLease } from '../../src/state/types.js';
import { redisForFile, runStateWorker, startRedis } from '../helpers/redis.js';

const redisServer = redisForFile();

async function connect(keyPrefix = 'lease:'): Promise<RedisStateStore> {
  // A generous command timeout: the machine running the tests is shared, and a timeout would refuse (fail closed).
  return RedisStateStore.connect({ url: redisServer.current.url, keyPrefix, commandTimeoutMs: 5_000 });
}

/** `loops` concurrent callers of `counter`, each taking units until refused; resolves to the units granted. */
async function takeUntilRefused(
  counter: FleetQuotaCounter,
  key: string,
  limit: number,
  loops: number,
  windowMs?: number,
): Promise<number> {
  let granted = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while ((await counter.consume(key, limit, windowMs)).allowed) granted += 1;
    }),
  );
  return granted;
}

/** `n` concurrent decisions; resolves to how many were allowed. */
async function take(counter: FleetQuotaCounter, key: string, limit: number, n: number): Promise<number> {
  const results = await Promise.all(Array.from({ length: n }, () => counter.consume(key, limit)));
  return results.filter((r) => r.allowed).length;
}

/** Records every lease the store grants (the real store's answer, seen on its way back). */
function recordGrants(store: RedisStateStore): QuotaLease[] {
  const grants: QuotaLease[] = [];
  const lease = store.lease.bind(store);
  store.lease = async (...args) => {
    const grant = await lease(...args);
    grants.push(grant);
    return grant;
  };
  return grants;
}

let keys = 0;
const freshKey = () => `q${++keys}`;

describe('leased quota units', () => {
  it('counters racing on one key get exactly the quota between them, whatever the limit, block and concurrency', async () => {
    await using store = await connect();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 80 }),
        fc.array(
          fc.record({ loops: fc.integer({ min: 1, max: 8 }), maxBlock: fc.integer({ min: 1, max: 32 }) }),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        async (limit, shapes) => {
          const key = freshKey();
          const counters = shapes.map(
            (s) => new FleetQuotaCounter(store, { lease: { maxBlock: s.maxBlock } }),
          );
          const granted = await Promise.all(
            counters.map((c, i) => takeUntilRefused(c, key, limit, shapes[i]!.loops)),
          );
          // Never more than the quota, and no unit stranded: every one was given while demand went on.
          expect(granted.reduce((a, b) => a + b, 0)).toBe(limit);
          await Promise.all(counters.map((c) => c.close()));
          expect(await store.used(key)).toBe(limit);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('4 processes with 16 callers each get exactly the quota of 137 between them', async () => {
    const key = freshKey();
    const outs = await Promise.all(
      [2, 8, 32, 64].map((maxBlock) =>
        runStateWorker('lease-worker', [
          redisServer.current.url,
          'lease:',
          key,
          '137',
          '16',
          String(maxBlock),
        ]),
      ),
    );
    expect(outs.map((o) => Number(o.trim())).reduce((a, b) => a + b, 0)).toBe(137);
    await using store = await connect();
    expect(await store.used(key)).toBe(137);
  });

  it('most decisions need no round trip: blocks grow while callers wait', async () => {
    await using store = await connect();
    const grants = recordGrants(store);
    await using counter = new FleetQuotaCounter(store, { lease: { maxBlock: 64 } });
    const key = freshKey();
    let allowed = 0;
    for (let round = 0; round < 20; round++) allowed += await take(counter, key, 1_000_000, 64);
    expect(allowed).toBe(1_280);
    expect(grants.length).toBeLessThan(1_280 / 8);
    expect(Math.max(...grants.map((g) => g.granted))).toBe(64);
  });

  it('near the limit, leases are one unit at a time, so the last units go to whoever asks', async () => {
    await using store = await connect();
    const grants = recordGrants(store);
    const key = freshKey();
    const counters = [1, 2, 3].map(() => new FleetQuotaCounter(store, { lease: { maxBlock: 32 } }));
    const granted = await Promise.all(counters.map((c) => takeUntilRefused(c, key, 200, 12)));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(200);
    // What was left before each grant: a lease takes at most an eighth of it, so the last 8 went one by one.
    const given = grants.filter((g) => g.granted > 0);
    for (const g of given) expect(g.granted).toBeLessThanOrEqual(Math.ceil((200 - (g.used - g.granted)) / 8));
    const last = given.filter((g) => g.used - g.granted >= 192);
    expect(last.map((g) => g.granted)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    await Promise.all(counters.map((c) => c.close()));
  });

  it('close gives the unspent units back to the fleet', async () => {
    await using store = await connect();
    const key = freshKey();
    const counter = new FleetQuotaCounter(store, { lease: { maxBlock: 16 } });
    expect(await take(counter, key, 1_000, 40)).toBe(40);
    // The lease holds units ahead of need (a refill starts while half a block is left).
    await vi.waitFor(async () => expect(await store.used(key)).toBeGreaterThan(40));
    await counter.close();
    expect(await store.used(key)).toBe(40);
    await expect(counter.consume(key, 1_000)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
  });

  it('a quiet process gives its unspent units back by itself', async () => {
    await using store = await connect();
    const key = freshKey();
    await using counter = new FleetQuotaCounter(store, { lease: { maxBlock: 16, idleMs: 100 } });
    expect(await take(counter, key, 1_000, 40)).toBe(40);
    await vi.waitFor(async () => expect(await store.used(key)).toBe(40), { timeout: 10_000, interval: 50 });
    // And it leases again when asked.
    expect(await take(counter, key, 1_000, 5)).toBe(5);
  });

  it("when the window rolls, a lease's units are not spent in the next window: each window gives exactly its quota", async () => {
    const W = 4_000;
    await using store = await connect();
    const key = freshKey();
    // A holds its unspent units until the window ends (they are not given back for being idle).
    const a = new FleetQuotaCounter(store, { lease: { maxBlock: 16, idleMs: 600_000 } });
    const b = new FleetQuotaCounter(store, { lease: { maxBlock: 16 } });
    // Start early in a window (the store runs on this host, so its clock is this one).
    await vi.waitFor(() => expect(Date.now() % W).toBeLessThan(500), { timeout: W * 2, interval: 10 });
    const first = Math.floor(Date.now() / W);
    let early = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        if ((await a.consume(key, 40, W)).allowed) early += 1;
      }),
    );
    expect(early).toBe(20);
    await vi.waitFor(async () => expect(await store.used(key, W)).toBeGreaterThan(20));
    // Wait for the next window (observed on the clock, as the store's windows follow it).
    await vi.waitFor(() => expect(Math.floor(Date.now() / W)).toBeGreaterThan(first), {
      timeout: W * 2,
      interval: 10,
    });
    const granted = (await Promise.all([a, b].map((c) => takeUntilRefused(c, key, 40, 10, W)))).reduce(
      (x, y) => x + y,
      0,
    );
    expect(granted).toBe(40);
    expect(await store.used(key, W)).toBe(40);
    await Promise.all([a.close(), b.close()]);
  });

  it('refuses once Redis is down and its lease is spent: no local allowance beyond what was leased', async () => {
    await using server = await startRedis();
    const store = await RedisStateStore.connect({
      url: server.url,
      keyPrefix: 'down:',
      commandTimeoutMs: 5_000,
    });
    try {
      await using counter = new FleetQuotaCounter(store, { lease: { maxBlock: 1 } });
      expect((await counter.consume('k', 100)).allowed).toBe(true);
      // The unit taken, and one leased ahead of need.
      await vi.waitFor(async () => expect(await store.used('k')).toBe(2));
      await server.stop();
      expect((await counter.consume('k', 100)).allowed).toBe(true);
      await expect(counter.consume('k', 100)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
      await expect(counter.consume('k', 100)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
      await using fresh = new FleetQuotaCounter(store, { lease: {} });
      await expect(fresh.consume('k', 100)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
    } finally {
      await store.close();
    }
  });

  it('with a local share as fallback, the units it leased count as its own: it never gives more than its share', async () => {
    await using server = await startRedis();
    const store = await RedisStateStore.connect({
      url: server.url,
      keyPrefix: 'share:',
      commandTimeoutMs: 5_000,
    });
    try {
      await using counter = new FleetQuotaCounter(store, {
        lease: { maxBlock: 1 },
        onUnavailable: { localShare: { replicas: 2 } },
      });
      for (let i = 0; i < 3; i++) expect((await counter.consume('k', 10)).allowed).toBe(true);
      // 3 taken and 1 leased ahead: 4 of its share of 5 (10 over 2 replicas) are its own.
      await vi.waitFor(async () => expect(await store.used('k')).toBe(4));
      await server.stop();
      const during: boolean[] = [];
      for (let i = 0; i < 3; i++) during.push((await counter.consume('k', 10)).allowed);
      // The unit it held, then 1 locally: 5 in all, its share.
      expect(during).toEqual([true, true, false]);
    } finally {
      await store.close();
    }
  });

  it('refuses bad lease options, and a lease over a store that cannot lease, with INVALID_CONFIG', async () => {
    await using store = await connect();
    expect(() => new FleetQuotaCounter(store, { lease: { maxBlock: 0 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('lease.maxBlock') }),
    );
    expect(() => new FleetQuotaCounter(store, { lease: { idleMs: 1.5 } })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining('lease.idleMs') }),
    );
    expect(() => new FleetQuotaCounter(new MemoryStateStore(), { lease: {} })).toThrow(
      expect.objectContaining({
        code: 'INVALID_CONFIG',
        message: expect.stringContaining('RedisStateStore'),
      }),
    );
  });
});
