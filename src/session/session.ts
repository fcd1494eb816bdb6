/**
 * A minimal session lifecycle: `start()` once, `close()` once, both safe to call again and concurrently,
 * and `await using` support. `AgentSession` is built on it; any class with `start()` / `close()` works
 * with {@link SessionInteropMixin} as well.
 */
import { ClosedError } from '../errors.js';

/** Where a session is in its life. */
export type SessionState = 'idle' | 'starting' | 'started' | 'closing' | 'closed';

/** The base session: subclasses put their work in `onStart` / `onClose`. */
export class Session implements AsyncDisposable {
  #state: SessionState = 'idle';
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /**
   * Takes an options object so that mixed classes can read theirs from it (`SessionInteropMixin` reads
   * `options.interop`); the base session itself needs none.
   */
  // biome-ignore lint/complexity/noUselessConstructor: declares the argument mixed classes pass on.
  constructor(_options: object = {}) {}

  /** Where the session is in its life. */
  get state(): SessionState {
    return this.#state;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#state === 'closing' || this.#state === 'closed';
  }

  /** Starts the session. Concurrent and repeated calls share one start; a failed start may be retried. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError('This session is closed; create a new one.'));
    this.#starting ??= (async () => {
      this.#state = 'starting';
      try {
        await this.onStart();
        if (this.#state === 'starting') this.#state = 'started';
      } catch (err) {
        this.#starting = undefined;
        if (this.#state === 'starting') this.#state = 'idle';
        throw err;
      }
    })();
    return this.#starting;
  }

  /** Closes the session once; later calls resolve when the first close is done. Never rejects twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#state = 'closing';
      try {
        await this.#starting?.catch(() => {});
        await this.onClose();
      } finally {
        this.#state = 'closed';
      }
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Work done by `start()`. */
  protected async onStart(): Promise<void> {}

  /** Work done by `close()`; runs even when `start()` failed. */
  protected async onClose(): Promise<void> {}
}
