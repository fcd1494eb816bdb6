/**
 * The state store (issue 16): one contract for the in-process store and the Redis store (a real redis-server on a
 * loopback port), then what only Redis can show: several processes sharing one quota, and a server that dies.
 */
import { describe, expect, it } from 'vitest';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { CapabilityGate } from '../../src/security/gate.js';
import { StreamAuditSink } from '../../src/state/audit-stream.js';
import { MemoryStateStore } from '../../src/state/memory.js';
import { RedisStateStore } from '../../src/state/redis.js';
import type { StateStore } from '../../src/state/types.js';
import { redisForFile, runStateWorker } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

const redisServer = redisForFile();

let prefixes = 0;
/** Each test gets its own key prefix, so tests never see each other's state. */
const makers: [string, () => Promise<StateStore>][] = [
  ['memory', async () => new MemoryStateStore()],
  ['redis', () => RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: `t${++prefixes}:` })],
];

describe.each(makers)('%s state store', (_name, make) => {
  it('consume grants exactly `limit` units, then refuses, and used() agrees', async () => {
    await using store = await make();
    const results = await Promise.all(Array.from({ length: 12 }, () => store.consume('k', 5)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect(results.filter((r) => !r.allowed).every((r) => r.used === 5 && r.limit === 5)).toBe(true);
    expect(await store.used('k')).toBe(5);
    expect(await store.used('other')).toBe(0);
  });

  it('a window starts over when it ends, and says when that is', async () => {
    await using store = await make();
    const first = await store.consume('w', 1, 300);
    expect(first.allowed).toBe(true);
    expect(first.resetMs).toBeGreaterThan(0);
    expect(first.resetMs).toBeLessThanOrEqual(300);
    // The window rolls over by the clock; wait for it instead of sleeping a fixed time.
    await waitUntil(async () => (await store.consume('w', 1, 300)).allowed);
  });

  it('keeps values, with and without expiry, and deletes them', async () => {
    await using store = await make();
    await store.set('a', 'one');
    await store.set('b', 'two', { ttlMs: 50 });
    expect(await store.get('a')).toBe('one');
    await waitUntil(async () => (await store.get('b')) === undefined);
    await store.delete('a');
    expect(await store.get('a')).toBeUndefined();
  });

  it('delivers a published message to every subscriber until it unsubscribes', async () => {
    await using store = await make();
    const got: string[] = [];
    const off = await store.subscribe('revocations', (m) => got.push(`1:${m}`));
    await store.subscribe('revocations', (m) => got.push(`2:${m}`));
    await store.publish('revocations', 'rule-7');
    await waitUntil(() => got.length === 2);
    expect(got.sort()).toEqual(['1:rule-7', '2:rule-7']);
    await off();
    await store.publish('revocations', 'rule-8');
    await waitUntil(() => got.length === 3);
    expect(got.at(-1)).toBe('2:rule-8');
  });

  it('compareAndSet writes only over exactly the expected value, and one of many racing writers wins', async () => {
    await using store = await make();
    expect(await store.compareAndSet('cas', 'nothing yet', 'x')).toBe(false);
    expect(await store.compareAndSet('cas', undefined, 'one')).toBe(true);
    expect(await store.compareAndSet('cas', undefined, 'again')).toBe(false);
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.compareAndSet('cas', 'one', `two-${i}`)),
    );
    expect(racers.filter(Boolean)).toHaveLength(1);
    expect(await store.get('cas')).toBe(`two-${racers.indexOf(true)}`);
  });

  it('lists the members of a group whose heartbeat is live, and forgets one that left or expired', async () => {
    await using store = await make();
    await store.putMember('g', 'a', 'va', 60_000);
    await store.putMember('g', 'b', 'vb', 50);
    await store.putMember('g', 'c', 'line one\nline two', 60_000);
    await store.putMember('other', 'x', 'vx', 60_000);
    expect((await store.members('g')).get('c')).toBe('line one\nline two');
    await waitUntil(async () => !(await store.members('g')).has('b'), { timeoutMs: 3_000 });
    await store.removeMember('g', 'c');
    expect([...(await store.members('g'))]).toEqual([['a', 'va']]);
    await store.putMember('g', 'a', 'va2', 60_000);
    expect((await store.members('g')).get('a')).toBe('va2');
  });

  it('withLock lets one holder in at a time', async () => {
    await using store = await make();
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        store.withLock('refresh', async () => {
          inside += 1;
          most = Math.max(most, inside);
          // Holds the lock across timer turns, when another holder would get in if the lock let it.
          await new Promise((r) => setTimeout(r, 10));
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it('a StreamAuditSink appends every decision the gate makes, in the audit JSON shape', async () => {
    await using store = await make();
    const caps = new CapabilitySet();
    caps.grant('mcp:fs:read', 'execute', { id: 'read' });
    const gate = new CapabilityGate({
      capabilities: caps,
      audit: new StreamAuditSink(store, { stream: 'decisions' }),
    });
    await gate.authorize({
      resource: 'mcp:fs:read',
      action: 'execute',
      context: { agent: 'a1', args: { path: '/x' } },
    });
    await expect(gate.authorize({ resource: 'mcp:fs:write', action: 'execute' })).rejects.toMatchObject({
      code: 'CAPABILITY_DENIED',
    });
    const records =
      store instanceof MemoryStateStore
        ? store.records('decisions')
        : await (store as RedisStateStore).records('decisions');
    const parsed = records.map((r) => JSON.parse(r.record as string) as Record<string, unknown>);
    expect(parsed).toMatchObject([
      { resource: 'mcp:fs:read', allowed: true, ruleId: 'read', agent: 'a1', argumentKeys: ['path'] },
      { resource: 'mcp:fs:write', allowed: false, effect: 'default-deny' },
    ]);
    expect(JSON.stringify(parsed)).not.toContain('/x'); // argument values are never logged
  });
});

describe('Redis state store across processes', () => {
  it('4 processes firing 200 concurrent consumes get exactly the limit between them', async () => {
    const limit = 37;
    const runs = Array.from({ length: 4 }, async () =>
      Number(
        (
          await runStateWorker('consume-worker', [
            redisServer.current.url,
            'fleet:',
            'q',
            String(limit),
            '50',
          ])
        ).trim(),
      ),
    );
    const granted = await Promise.all(runs);
    expect(granted.reduce((a, b) => a + b, 0)).toBe(limit);
    await using store = await RedisStateStore.connect({ url: redisServer.current.url, keyPrefix: 'fleet:' });
    expect(await store.used('q')).toBe(limit);
  });
});

describe('Redis state store when the server fails', () => {
  it('fails fast with STATE_UNAVAILABLE while Redis is down, and works again after it restarts', async () => {
    await using store = await RedisStateStore.connect({
      url: redisServer.current.url,
      keyPrefix: 'down:',
      commandTimeoutMs: 500,
    });
    expect((await store.consume('k', 10)).allowed).toBe(true);
    await redisServer.current.stop();
    await expect(store.consume('k', 10)).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
    await expect(store.get('x')).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE' });
    await redisServer.current.start();
    // Reconnects by itself; the restarted server is empty.
    const after = await waitUntil(
      async () => {
        try {
          return await store.consume('k', 10);
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 10_000 },
    );
    expect(after).toMatchObject({ allowed: true, used: 1 });
  });

  it('refuses bad options with INVALID_CONFIG and an unreachable server with STATE_UNAVAILABLE', async () => {
    await expect(RedisStateStore.connect({ url: 'http://127.0.0.1:1' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
    await expect(
      RedisStateStore.connect({ url: 'redis://:hunter2-secret@127.0.0.1:1', connectTimeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'STATE_UNAVAILABLE', message: expect.not.stringContaining('hunter2') });
  });
});
