import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls `check` until it returns a value other than undefined/false, and returns that value.
 * Throws `message` (or a default) after `timeoutMs`. For conditions with no event to await.
 */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = 5_000,
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
