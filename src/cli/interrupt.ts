/** Ctrl-C while a command waits: clean up (bounded in time), then end the command with `InterruptedError`. */
import { InterruptedError } from './exit.js';

/** How long Ctrl-C waits for cleanup (closing servers) before the command gives up on it. */
export const INTERRUPT_GRACE_MS = 3_000;

/** Waits for `closing`, but after Ctrl-C at most {@link INTERRUPT_GRACE_MS}. */
export async function closeWithin(signal: AbortSignal | undefined, closing: Promise<void>): Promise<void> {
  if (signal?.aborted !== true) return closing;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((done) => {
    timer = setTimeout(done, INTERRUPT_GRACE_MS);
    timer.unref();
  });
  await Promise.race([closing.catch(() => {}), grace]);
  clearTimeout(timer);
}

/**
 * Resolves like `work`, unless `signal` aborts first: then runs `cleanup` (for at most
 * {@link INTERRUPT_GRACE_MS}) and rejects with `InterruptedError`.
 */
export async function interruptible<T>(
  signal: AbortSignal | undefined,
  work: Promise<T>,
  cleanup: () => Promise<unknown>,
): Promise<T> {
  if (signal === undefined) return work;
  const interrupted = async (): Promise<never> => {
    work.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((done) => {
      timer = setTimeout(done, INTERRUPT_GRACE_MS);
      timer.unref();
    });
    await Promise.race([cleanup().catch(() => {}), grace]);
    clearTimeout(timer);
    throw new InterruptedError();
  };
  if (signal.aborted) return interrupted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => interrupted().catch(reject);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  // Work that fails because of the abort (a cancelled request) ends as the interruption, after cleanup.
  // Work that finishes only because the abort cut it short (a closed connect resolves as 'failed') is the
  // interruption too.
  const guarded = work.then(
    (value) => (signal.aborted ? aborted : value),
    (err: unknown) => (signal.aborted ? aborted : Promise.reject(err)),
  );
  try {
    return await Promise.race([guarded, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}
