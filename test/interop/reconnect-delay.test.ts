import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReconnectSchema } from '../../src/config/servers.js';
import { reconnectDelay } from '../../src/interop/connection.js';

describe('reconnect backoff', () => {
  it('grows by factor from initialDelayMs and stops at maxDelayMs without jitter', () => {
    const options = ReconnectSchema.parse({
      initialDelayMs: 250,
      maxDelayMs: 2_000,
      factor: 2,
      jitter: 'none',
    });
    expect([1, 2, 3, 4, 5, 6].map((n) => reconnectDelay(options, n))).toEqual([
      250, 500, 1_000, 2_000, 2_000, 2_000,
    ]);
  });

  it('with full jitter, always stays between 0 and the exact delay', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 1, max: 10, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 0, max: 0.999_999, noNaN: true }),
        (initialDelayMs, maxDelayMs, factor, attempt, r) => {
          const options = ReconnectSchema.parse({ initialDelayMs, maxDelayMs, factor });
          const exact = reconnectDelay({ ...options, jitter: 'none' }, attempt);
          const delay = reconnectDelay(options, attempt, () => r);
          return delay >= 0 && delay <= exact && exact <= maxDelayMs;
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('accepts Infinity attempts, as a number or as the string files can hold', () => {
    expect(ReconnectSchema.parse({ maxAttempts: Number.POSITIVE_INFINITY }).maxAttempts).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(ReconnectSchema.parse({ maxAttempts: 'Infinity' }).maxAttempts).toBe(Number.POSITIVE_INFINITY);
    expect(() => ReconnectSchema.parse({ maxAttempts: 0 })).toThrow();
    expect(() => ReconnectSchema.parse({ jitter: 'some' })).toThrow();
  });
});
