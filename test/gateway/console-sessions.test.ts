// The console's session table (issue 41): random ids, expiry, a bound that ends the oldest session, and CSRF
// tokens compared in constant time against the session's own.
import { describe, expect, it } from 'vitest';
import { ConsoleSessions, csrfMatches } from '../../src/gateway/console/sessions.js';
import type { Principal } from '../../src/gateway/principals.js';

const ops: Principal = { subject: 'ops', groups: [], scopes: [], via: 'api-key' };

describe('console sessions', () => {
  it('expires a session after its time to live', () => {
    let now = 1_000;
    const sessions = new ConsoleSessions({ ttlMs: 60_000, max: 4, now: () => now });
    const session = sessions.create(ops);
    expect(sessions.get(session.id)).toBe(session);
    now += 59_999;
    expect(sessions.get(session.id)).toBe(session);
    now += 1;
    expect(sessions.get(session.id)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('ends the oldest session when a sign-in would pass the bound', () => {
    const sessions = new ConsoleSessions({ ttlMs: 60_000, max: 2 });
    const [a, b, c] = [sessions.create(ops), sessions.create(ops), sessions.create(ops)];
    expect(sessions.size).toBe(2);
    expect(sessions.get(a.id)).toBeUndefined();
    expect(sessions.get(b.id)).toBe(b);
    expect(sessions.get(c.id)).toBe(c);
  });

  it('gives each session its own random id and CSRF token, and matches only that token', () => {
    const sessions = new ConsoleSessions({ ttlMs: 60_000, max: 10 });
    const one = sessions.create(ops);
    const two = sessions.create(ops);
    expect(new Set([one.id, one.csrf, two.id, two.csrf]).size).toBe(4);
    expect(one.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrfMatches(one, one.csrf)).toBe(true);
    expect(csrfMatches(one, two.csrf)).toBe(false);
    expect(csrfMatches(one, one.csrf.slice(1))).toBe(false);
    expect(csrfMatches(one, undefined)).toBe(false);
    expect(csrfMatches(one, [one.csrf])).toBe(false);
    expect(sessions.get(undefined)).toBeUndefined();
    expect(sessions.get('not-a-session')).toBeUndefined();
  });
});
