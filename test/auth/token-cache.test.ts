// Issue 41: exchanged tokens are kept per key until they expire minus the skew, at most maxEntries of them (least
// recently used go first), and one mint runs per key at a time.
import { describe, expect, it } from 'vitest';
import { TokenCache } from '../../src/auth/token-cache.js';

function counter() {
  const minted: string[] = [];
  const mint = (key: string, expiresAt: number | undefined) => async () => {
    minted.push(key);
    return { token: `${key}#${minted.length}`, expiresAt };
  };
  return { minted, mint };
}

describe('TokenCache', () => {
  it('keeps a token until its expiry minus the skew, then mints again', async () => {
    let now = 0;
    const cache = new TokenCache({ maxEntries: 10, skewMs: 100, now: () => now });
    const { minted, mint } = counter();
    expect(await cache.get('alice', mint('alice', 1000))).toBe('alice#1');
    now = 899;
    expect(await cache.get('alice', mint('alice', 2000))).toBe('alice#1');
    now = 900;
    expect(await cache.get('alice', mint('alice', 2000))).toBe('alice#2');
    expect(minted).toEqual(['alice', 'alice']);
  });

  it('never keeps a token without an expiry', async () => {
    const cache = new TokenCache({ maxEntries: 10, skewMs: 0 });
    const { minted, mint } = counter();
    await cache.get('alice', mint('alice', undefined));
    await cache.get('alice', mint('alice', undefined));
    expect(minted).toHaveLength(2);
    expect(cache.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const cache = new TokenCache({ maxEntries: 2, skewMs: 0, now: () => 0 });
    const { minted, mint } = counter();
    await cache.get('alice', mint('alice', 1000));
    await cache.get('bob', mint('bob', 1000));
    await cache.get('alice', mint('alice', 1000)); // alice is now the most recently used
    await cache.get('carol', mint('carol', 1000)); // bob goes
    expect(cache.size).toBe(2);
    await cache.get('alice', mint('alice', 1000));
    await cache.get('bob', mint('bob', 1000));
    expect(minted).toEqual(['alice', 'bob', 'carol', 'bob']);
  });

  it('runs one mint per key at a time; concurrent requests share it, and a failure is not kept', async () => {
    const cache = new TokenCache({ maxEntries: 10, skewMs: 0, now: () => 0 });
    let calls = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = async () => {
      calls++;
      await gate;
      return { token: 'shared', expiresAt: 1000 };
    };
    const all = Promise.all([cache.get('k', slow), cache.get('k', slow), cache.get('k', slow)]);
    release();
    expect(await all).toEqual(['shared', 'shared', 'shared']);
    expect(calls).toBe(1);
    await expect(cache.get('x', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await cache.get('x', async () => ({ token: 'later', expiresAt: 1000 }))).toBe('later');
  });
});
