// What the HTTP-stack tests share: closing every server, client and manager a test started, and finding the
// SSRF guard's refusal behind a failed fetch.
import { afterEach } from 'vitest';
import { NetworkPolicyError } from '../../src/net/network.js';

/** Something a test starts and must close. */
export interface Closable {
  close(): Promise<void> | void;
}

/**
 * Registers an `afterEach` that closes, in parallel, everything `track`ed during the test; returns `track`, which
 * passes its argument through.
 */
export function closesAfterEach(): <T extends Closable>(thing: T) => T {
  const open: Closable[] = [];
  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map(async (c) => c.close()));
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}

/** The policy error behind a failed fetch (undici wraps connector errors in `TypeError: fetch failed`). */
export function policyError(err: unknown): NetworkPolicyError | undefined {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof NetworkPolicyError) return e;
  return undefined;
}
