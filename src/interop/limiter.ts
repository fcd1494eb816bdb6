/** Bounds calls in flight per server, with a bounded wait queue; beyond it calls fail fast with `OVERLOADED`. */
import { OverloadedError, RequestCancelledError } from '../errors.js';
import { requestSignal } from '../net/signals.js';

/** A counting semaphore with a bounded FIFO queue. `max` undefined means no limit (and no queue). */
export class CallLimiter {
  readonly #max: number | undefined;
  readonly #maxQueued: number;
  readonly #server: string;
  #active = 0;
  readonly #queue: { grant: () => void; cancel: (err: Error) => void }[] = [];

  constructor(server: string, max: number | undefined, maxQueued: number) {
    this.#server = server;
    this.#max = max;
    this.#maxQueued = maxQueued;
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Resolves to a release function once a slot is free; rejects at once with `OVERLOADED` when the queue is full. */
  acquire(signal?: AbortSignal): Promise<() => void> | (() => void) {
    if (this.#max === undefined) return noop;
    if (this.#active < this.#max) {
      this.#active += 1;
      return this.#release();
    }
    if (this.#queue.length >= this.#maxQueued) {
      throw new OverloadedError(
        `Server '${this.#server}' has ${this.#active} calls in flight and ${this.#queue.length} queued ` +
          `(maxConcurrentCalls ${this.#max}, maxQueuedCalls ${this.#maxQueued}); try again later.`,
        { server: this.#server },
      );
    }
    return new Promise((resolve, reject) => {
      // One listener per caller signal however many calls wait on it (see signals.ts).
      const follow = signal === undefined ? undefined : requestSignal(signal);
      const waiter = {
        grant: () => {
          follow?.dispose();
          this.#active += 1;
          resolve(this.#release());
        },
        cancel: reject,
      };
      const onAbort = () => {
        follow?.dispose();
        const i = this.#queue.indexOf(waiter);
        if (i !== -1) this.#queue.splice(i, 1);
        reject(
          new RequestCancelledError(`A queued call to server '${this.#server}' was cancelled.`, {
            server: this.#server,
          }),
        );
      };
      if (follow?.signal.aborted) {
        onAbort();
        return;
      }
      follow?.signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active -= 1;
      this.#queue.shift()?.grant();
    };
  }
}

const noop = () => {};
