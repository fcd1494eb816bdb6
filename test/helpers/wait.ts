import { setTimeout as delay } from 'node:timers/promises';

/**
 * How long a test waits for a condition it can observe before it fails: most of a test's own 30 s
 * (vitest.config.ts), so a loaded machine makes a test slow, not red, and a condition that never comes still fails
 * with its own message rather than the test's timeout (issue 39). `expect.poll` has the same default
 * (vitest.config.ts); pass it to `vi.waitFor`, whose default is one second.
 */
export const CONDITION_TIMEOUT_MS = 20_000;

/**
 * Polls `check` until it returns a value other than undefined/false, and returns that value.
 * Throws `message` (or a default) after `timeoutMs`. For conditions with no event to await.
 */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = CONDITION_TIMEOUT_MS,
    intervalMs = 20,
    message,
  }: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(message ?? `Condition not met within ${timeoutMs} ms`);
    await delay(intervalMs);
  }
}
