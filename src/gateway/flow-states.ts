/**
 * The gateway's flow states (issue 42): one {@link FlowState} per downstream caller, so a flow rule decides a call
 * on what entered that caller's context before it. Where the protocol names a session the gateway serves (stdio: one
 * client for the process), the session has its own state. HTTP requests name none: 2026-07-28 has no protocol
 * session, and the gateway serves 2025-era HTTP clients statelessly (no `Mcp-Session-Id`, so that any replica can
 * take any request); their requests share one state per authenticated principal. Labels only grow, so merging a
 * caller's conversations errs toward refusing, never toward allowing.
 *
 * The table is bounded: a state goes after `idleTimeoutMs` without a request (checked by an unref'd timer, cleared
 * on close), and all go when the gateway closes. A state is never dropped to make room: a new caller beyond
 * `maxStates` is refused with OVERLOADED, since forgetting a live caller's labels would let a flow rule allow what
 * it should deny. (No HTTP session ends with a `DELETE`: the gateway hands out no `Mcp-Session-Id`.)
 */
import type { GatewayFlowConfig } from '../config/gateway-flow.js';
import { ClosedError, OverloadedError } from '../errors.js';
import { FlowState, type FlowStateOptions } from '../security/flow.js';

/** Runs `work` with the flow state of one caller (held while it runs, so it is not dropped as idle meanwhile). */
export type FlowScope = <T>(work: (flow: FlowState) => Promise<T>) => Promise<T>;

interface Entry {
  readonly state: FlowState;
  /** Requests using the state now. */
  busy: number;
  /** When the last request using it began or ended. */
  lastUsed: number;
}

/** Options of {@link FlowStates}. */
export interface FlowStatesOptions extends GatewayFlowConfig {
  /**
   * The policy's flow settings (`minFragmentLength`, `windowSize`), read for each new state so a replaced policy
   * applies to callers that come after it; the gateway's `maxIndexedChars` bounds every state. @default FlowState's
   */
  settings?: (() => Readonly<FlowStateOptions>) | undefined;
  /** Hears when a new caller is refused because the table is full (once until a state is admitted again). */
  onFull?: ((held: number) => void) | undefined;
  /** @default Date.now */
  clock?: (() => number) | undefined;
}

/** Flow states by caller key, bounded in number and dropped when idle. */
export class FlowStates {
  readonly #entries = new Map<string, Entry>();
  readonly #options: FlowStatesOptions;
  readonly #clock: () => number;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #full = false;

  constructor(options: FlowStatesOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** How many states are held. */
  get size(): number {
    return this.#entries.size;
  }

  /** A state that belongs to no table (the stdio session's, which lives as long as the gateway serves it). */
  create(): FlowState {
    return new FlowState({ ...this.#options.settings?.(), maxIndexedChars: this.#options.maxIndexedChars });
  }

  /**
   * Runs `work` with the state of `key`, made on first use. Throws (synchronously, before `work` runs) an
   * `OverloadedError` when the table is full of states that are not idle, and a `ClosedError` after close.
   */
  use<T>(key: string, work: (flow: FlowState) => Promise<T>): Promise<T> {
    const entry = this.#acquire(key);
    const release = () => {
      entry.busy--;
      entry.lastUsed = this.#clock();
    };
    let running: Promise<T>;
    try {
      running = work(entry.state);
    } catch (err) {
      release();
      throw err;
    }
    return running.finally(release);
  }

  /** A scope over the state of `key`, for a server instance that serves that caller. */
  scope(key: string): FlowScope {
    return (work) => this.use(key, work);
  }

  /** Drops every state no request holds that has been idle for `idleTimeoutMs`; returns how many went. */
  sweep(): number {
    const oldest = this.#clock() - this.#options.idleTimeoutMs;
    let dropped = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.busy === 0 && entry.lastUsed <= oldest) {
        this.#entries.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  /** Drops every state and stops the timer; a later request is refused. */
  close(): void {
    this.#closed = true;
    this.#entries.clear();
    this.#disarm();
  }

  #acquire(key: string): Entry {
    if (this.#closed) throw new ClosedError('The gateway is shutting down.');
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      if (this.#entries.size >= this.#options.maxStates) this.sweep();
      if (this.#entries.size >= this.#options.maxStates) {
        if (!this.#full) this.#options.onFull?.(this.#entries.size);
        this.#full = true;
        throw new OverloadedError(
          'The gateway is serving as many callers as it can track at once; try again later.',
        );
      }
      this.#full = false;
      entry = { state: this.create(), busy: 0, lastUsed: this.#clock() };
      this.#entries.set(key, entry);
      this.#arm();
    }
    entry.busy++;
    entry.lastUsed = this.#clock();
    return entry;
  }

  /** Sweeps every `idleTimeoutMs` while any state is held: a state goes between one and two timeouts idle. */
  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.sweep();
      if (this.#entries.size === 0) this.#disarm();
    }, this.#options.idleTimeoutMs);
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
