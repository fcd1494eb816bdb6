// The console's session tables (issue 41): random ids, expiry, a bound that ends the oldest session, CSRF tokens
// compared in constant time against the session's own, and a notice shown once. The same behaviour from this
// process's table and from the fleet's, which keeps sessions in the fleet's store (a real redis-server) so that
// every replica serves them.
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConsoleSessions,
  type ConsoleSessionTable,
  csrfMatches,
  FleetConsoleSessions,
} from '../../src/gateway/console/sessions.js';
import type { Principal } from '../../src/gateway/principals.js';
import { RedisStateStore } from '../../src/state/redis.js';
import { redisForFile } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

const ops: Principal = { subject: 'ops', groups: ['sre'], scopes: ['console'], via: 'api-key' };
const redis = redisForFile();
const stores: RedisStateStore[] = [];
let prefixes = 0;

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});

/** A fresh store namespace per table, so that tables of different tests never meet. */
async function store(prefix: string): Promise<RedisStateStore> {
  const s = await RedisStateStore.connect({ url: redis.current.url, keyPrefix: prefix });
  stores.push(s);
  return s;
}

type Make = (options: { ttlMs: number; max: number; now?: () => number }) => Promise<ConsoleSessionTable>;

const tables: [string, Make][] = [
  ['this process', async (options) => new ConsoleSessions(options)],
  ["the fleet's store", async (options) => new FleetConsoleSessions(await store(`s${prefixes++}:`), options)],
];

describe.each(tables)('console sessions kept in %s', (_, make) => {
  it('expires a session after its time to live', async () => {
    let now = Date.now();
    const sessions = await make({ ttlMs: 60_000, max: 4, now: () => now });
    const session = await sessions.create(ops);
    expect(await sessions.get(session.id)).toEqual(session);
    now += 59_999;
    expect(await sessions.get(session.id)).toEqual(session);
    now += 1;
    expect(await sessions.get(session.id)).toBeUndefined();
  });

  it('ends the oldest session when a sign-in would pass the bound', async () => {
    let now = Date.now();
    const sessions = await make({ ttlMs: 60_000, max: 2, now: () => now++ });
    const a = await sessions.create(ops);
    const b = await sessions.create(ops);
    const c = await sessions.create(ops);
    expect(await sessions.get(a.id)).toBeUndefined();
    expect(await sessions.get(b.id)).toEqual(b);
    expect(await sessions.get(c.id)).toEqual(c);
  });

  it('gives each session its own random id and CSRF token, and matches only that token', async () => {
    const sessions = await make({ ttlMs: 60_000, max: 10 });
    const one = await sessions.create(ops);
    const two = await sessions.create(ops);
    expect(new Set([one.id, one.csrf, two.id, two.csrf]).size).toBe(4);
    expect(one.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrfMatches(one, one.csrf)).toBe(true);
    expect(csrfMatches(one, two.csrf)).toBe(false);
    expect(csrfMatches(one, one.csrf.slice(1))).toBe(false);
    expect(csrfMatches(one, undefined)).toBe(false);
    expect(csrfMatches(one, [one.csrf])).toBe(false);
    expect(await sessions.get(undefined)).toBeUndefined();
    expect(await sessions.get('not-a-session')).toBeUndefined();
  });

  it('shows what an action said once, and a signed-out session has neither session nor notice', async () => {
    const sessions = await make({ ttlMs: 60_000, max: 10 });
    const session = await sessions.create(ops);
    expect(await sessions.notice(session.id)).toEqual({});
    await sessions.say(session.id, { done: 'Approved echo.' });
    await sessions.say(session.id, { error: 'Rule r1 was not revoked.' });
    expect(await sessions.notice(session.id)).toEqual({ error: 'Rule r1 was not revoked.' });
    expect(await sessions.notice(session.id)).toEqual({});
    await sessions.say(session.id, { done: 'Published.' });
    await sessions.delete(session.id);
    expect(await sessions.get(session.id)).toBeUndefined();
    expect(await sessions.notice(session.id)).toEqual({});
  });
});

describe("console sessions in the fleet's store", () => {
  it('are served by every replica, and a sign-out on one ends the session on all', async () => {
    const shared = await store('fleet-a:');
    const other = await store('fleet-a:');
    const here = new FleetConsoleSessions(shared, { ttlMs: 60_000, max: 10 });
    const there = new FleetConsoleSessions(other, { ttlMs: 60_000, max: 10 });
    const session = await here.create(ops);
    expect(await there.get(session.id)).toEqual(session);
    await there.say(session.id, { done: 'Approved echo.' });
    expect(await here.notice(session.id)).toEqual({ done: 'Approved echo.' });
    await there.delete(session.id);
    expect(await here.get(session.id)).toBeUndefined();
  });

  it('keep a digest of the session id in the store, never the id a browser presents', async () => {
    const s = await store('fleet-b:');
    const sessions = new FleetConsoleSessions(s, { ttlMs: 60_000, max: 10 });
    const session = await sessions.create(ops);
    const digest = createHash('sha256').update(session.id).digest('base64url');
    expect(await s.get(`console:session:${session.id}`)).toBeUndefined();
    const stored = JSON.parse((await s.get(`console:session:${digest}`)) ?? '{}');
    expect(stored).toEqual({ csrf: session.csrf, expiresAt: session.expiresAt, principal: ops });
    expect(JSON.stringify(stored)).not.toContain(session.id);
    // Presenting the digest itself as a cookie finds nothing.
    expect(await sessions.get(digest)).toBeUndefined();
  });

  it('treat a malformed record as no session: the operator signs in again', async () => {
    const s = await store('fleet-c:');
    const sessions = new FleetConsoleSessions(s, { ttlMs: 60_000, max: 10 });
    const session = await sessions.create(ops);
    const key = `console:session:${createHash('sha256').update(session.id).digest('base64url')}`;
    for (const garbage of [
      'not json',
      '{"csrf":"x"}',
      JSON.stringify({ csrf: 'x', expiresAt: 1, principal: {} }),
    ]) {
      await s.set(key, garbage);
      expect(await sessions.get(session.id)).toBeUndefined();
    }
  });

  it('expire in the store too, so a replica that never sees the session again leaves nothing behind', async () => {
    const s = await store('fleet-d:');
    const sessions = new FleetConsoleSessions(s, { ttlMs: 300, max: 10 });
    const session = await sessions.create(ops);
    const key = `console:session:${createHash('sha256').update(session.id).digest('base64url')}`;
    expect(await s.get(key)).toBeDefined();
    // Redis expires the record by itself (no get of this table's touches it meanwhile).
    await waitUntil(async () => (await s.get(key)) === undefined, {
      message: 'the session never expired in Redis',
    });
    expect((await s.members('console:sessions')).size).toBe(0);
  });
});
