/**
 * A downstream call that may stop for its caller's input (issue 17), as the relay holds it: the upstream call
 * runs on, and each request it makes waits here until the caller answers it (or the wait times out, or the call
 * is cancelled). Between rounds it is parked; while a round drives it, it is `busy` and no other round may.
 */
import { randomUUID } from 'node:crypto';
import type { InputRequest } from '@modelcontextprotocol/server';
import { RequestCancelledError, RequestTimeoutError } from '../errors.js';
import type { HandedOffRound } from '../protocol/input-rounds.js';

/** The reason a call's signal is aborted with when the call ends with no request open. */
const CALL_ENDED = new RequestCancelledError('The call ended.');

interface Outstanding {
  request: InputRequest;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * A call that may stop for input: the upstream call runs on, and each request it makes waits here until the
 * downstream client answers it (or the wait times out, or the call is cancelled).
 */
export class PendingCall {
  readonly id = randomUUID();
  /** Whose call it is, for the per-caller bound on waiting calls. */
  readonly owner: string;
  /** Principal, tool and arguments of the call: a round that names another is refused. */
  readonly binding: string;
  /** Whether a round drives the call now (a second round at once is refused: no call is answered twice). */
  busy = false;
  /** How many times the call parked for answers: a state from an earlier round is stale. */
  rounds = 0;
  readonly abort = new AbortController();
  readonly #outstanding = new Map<string, Outstanding>();
  /** Keys already handed to the client, so a request is never asked twice in one round. */
  readonly #asked = new Set<string>();
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #next = 0;
  settled: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
  /** A 2026-07-28 upstream's round handed back to the caller: the call ends, its state travels sealed (issue 41). */
  handedOff: { server: string; round: HandedOffRound } | undefined;
  result!: Promise<void>;

  constructor(owner: string, binding: string) {
    this.owner = owner;
    this.binding = binding;
  }

  ask(request: InputRequest, signal: AbortSignal): Promise<unknown> {
    const key = `r${++this.#next}`;
    return new Promise<unknown>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      // The server withdrew its request (or its connection ended): that one question is dropped.
      const withdraw = () => {
        this.#asked.delete(key);
        if (this.#outstanding.delete(key)) reject(signal.reason);
      };
      signal.addEventListener('abort', withdraw, { once: true });
      const done = () => signal.removeEventListener('abort', withdraw);
      this.#outstanding.set(key, {
        request,
        resolve: (value) => {
          done();
          resolve(value);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      this.#wake?.();
    });
  }

  #hasUnasked(): boolean {
    for (const key of this.#outstanding.keys()) if (!this.#asked.has(key)) return true;
    return false;
  }

  /** The requests the client has not been given yet (all outstanding ones, at a new round). */
  unasked(): Record<string, InputRequest> | undefined {
    const out: Record<string, InputRequest> = {};
    let any = false;
    for (const [key, entry] of this.#outstanding) {
      if (this.#asked.has(key)) continue;
      this.#asked.add(key);
      out[key] = entry.request;
      any = true;
    }
    return any ? out : undefined;
  }

  /** Applies a round's answers; a request the client left unanswered is asked again next round. */
  answer(responses: Record<string, unknown> | undefined): void {
    this.#asked.clear();
    for (const [key, value] of Object.entries(responses ?? {})) {
      const entry = this.#outstanding.get(key);
      if (entry === undefined) continue;
      this.#outstanding.delete(key);
      entry.resolve(value);
    }
  }

  /** Resolves when the call settles or a request needs the client. */
  waitForEvent(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.#wake = undefined;
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#wake = done;
      if (signal.aborted) return done();
      signal.addEventListener('abort', done, { once: true });
      void this.result.then(done);
      if (this.#hasUnasked()) done();
    });
  }

  /** Starts the wait for the client's next round; when it does not come, every open request fails. */
  armTimeout(ms: number, onExpired: () => void): void {
    this.disarm();
    this.#timer = setTimeout(() => {
      this.fail(
        new RequestTimeoutError(
          `The downstream client did not answer the relayed request within ${ms} ms (the gateway's inputTimeoutMs).`,
          ms,
        ),
      );
      onExpired();
    }, ms);
    this.#timer.unref();
  }

  disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Ends a call whose upstream call settled: a request still open fails with `error()`, which is built only then
   * (an error per call, with its stack, was a visible share of a busy gateway's profile), and whatever still
   * listens on the call's signal is cancelled.
   */
  end(error: () => unknown): void {
    if (this.#outstanding.size > 0) {
      this.fail(error());
      return;
    }
    this.disarm();
    this.abort.abort(CALL_ENDED);
  }

  /** Fails every open request and cancels the upstream call. */
  fail(error: unknown): void {
    this.disarm();
    for (const entry of this.#outstanding.values()) entry.reject(error);
    this.#outstanding.clear();
    this.abort.abort(error);
  }
}
