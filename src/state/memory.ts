/**
 * The embedded default: state for one process, with the same semantics as the Redis store (windows aligned to
 * the clock, locks with expiry), so code and tests behave the same on one host and on a fleet.
 */
import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import {
  checkQuotaArgs,
  DEFAULT_LOCK_TTL_MS,
  DEFAULT_LOCK_WAIT_MS,
  DEFAULT_STREAM_MAX_LENGTH,
  type LockOptions,
  type QuotaResult,
  type StateListener,
  type StateStore,
  StateUnavailableError,
} from './types.js';

/** Options of a {@link MemoryStateStore}. */
export interface MemoryStateStoreOptions {
  /** Time source, ms since the epoch. @default Date.now */
  clock?: (() => number) | undefined;
}

interface Entry {
  value: string;
  expiresAt: number | undefined;
}

/** State in this process's memory. */
export class MemoryStateStore implements StateStore {
  readonly #clock: () => number;
  readonly #values = new Map<string, Entry>();
  readonly #counters = new Map<string, { window: number; used: number }>();
  readonly #streams = new Map<string, Record<string, string>[]>();
  readonly #bus = new EventEmitter();
  readonly #locks = new Map<string, number>();
  readonly #groups = new Map<string, Map<string, Entry>>();
  #closed = false;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#bus.setMaxListeners(0);
  }

  async consume(key: string, limit: number, windowMs?: number): Promise<QuotaResult> {
    checkQuotaArgs(limit, windowMs);
    this.#open();
    const now = this.#clock();
    const window = windowMs === undefined ? 0 : Math.floor(now / windowMs);
    let counter = this.#counters.get(key);
    if (counter === undefined || counter.window !== window) {
      counter = { window, used: 0 };
      this.#counters.set(key, counter);
    }
    const resetMs = windowMs === undefined ? undefined : (window + 1) * windowMs - now;
    if (counter.used >= limit) return { allowed: false, used: counter.used, limit, resetMs };
    counter.used += 1;
    return { allowed: true, used: counter.used, limit, resetMs };
  }

  async used(key: string, windowMs?: number): Promise<number> {
    this.#open();
    const counter = this.#counters.get(key);
    const window = windowMs === undefined ? 0 : Math.floor(this.#clock() / windowMs);
    return counter === undefined || counter.window !== window ? 0 : counter.used;
  }

  async get(key: string): Promise<string | undefined> {
    this.#open();
    return this.#value(key);
  }

  async set(key: string, value: string, options: { ttlMs?: number | undefined } = {}): Promise<void> {
    this.#open();
    const ttl = options.ttlMs;
    this.#values.set(key, { value, expiresAt: ttl === undefined ? undefined : this.#clock() + ttl });
  }

  async delete(key: string): Promise<void> {
    this.#open();
    this.#values.delete(key);
  }

  async compareAndSet(key: string, expected: string | undefined, value: string): Promise<boolean> {
    this.#open();
    // The check and the write in one synchronous step: nothing else can run between them.
    if (this.#value(key) !== expected) return false;
    this.#values.set(key, { value, expiresAt: undefined });
    return true;
  }

  async putMember(group: string, member: string, value: string, ttlMs: number): Promise<void> {
    this.#open();
    let members = this.#groups.get(group);
    if (members === undefined) {
      members = new Map();
      this.#groups.set(group, members);
    }
    members.set(member, { value, expiresAt: this.#clock() + ttlMs });
  }

  async members(group: string): Promise<Map<string, string>> {
    this.#open();
    const now = this.#clock();
    const live = new Map<string, string>();
    for (const [member, entry] of this.#groups.get(group) ?? []) {
      if (entry.expiresAt !== undefined && now >= entry.expiresAt) this.#groups.get(group)?.delete(member);
      else live.set(member, entry.value);
    }
    return live;
  }

  async removeMember(group: string, member: string): Promise<void> {
    this.#open();
    this.#groups.get(group)?.delete(member);
  }

  async publish(channel: string, message: string): Promise<void> {
    this.#open();
    // Delivered on a later turn, as a network round trip would be.
    queueMicrotask(() => this.#bus.emit(channel, message));
  }

  async subscribe(channel: string, listener: StateListener): Promise<() => Promise<void>> {
    this.#open();
    this.#bus.on(channel, listener);
    return async () => {
      this.#bus.off(channel, listener);
    };
  }

  async withLock<T>(name: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
    const ttl = options.ttlMs ?? DEFAULT_LOCK_TTL_MS;
    const deadline = this.#clock() + (options.waitMs ?? DEFAULT_LOCK_WAIT_MS);
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      this.#open();
      const heldUntil = this.#locks.get(name);
      if (heldUntil === undefined || this.#clock() >= heldUntil) break;
      if (this.#clock() >= deadline) {
        throw new StateUnavailableError(`Timed out waiting for the lock '${name}'.`);
      }
      await delay(pause);
    }
    const until = this.#clock() + ttl;
    this.#locks.set(name, until);
    try {
      return await fn();
    } finally {
      if (this.#locks.get(name) === until) this.#locks.delete(name);
    }
  }

  async append(
    stream: string,
    record: Readonly<Record<string, string>>,
    maxLength = DEFAULT_STREAM_MAX_LENGTH,
  ): Promise<void> {
    this.#open();
    const list = this.#streams.get(stream) ?? [];
    list.push({ ...record });
    if (list.length > maxLength) list.splice(0, list.length - maxLength);
    this.#streams.set(stream, list);
  }

  /** The records of a stream, oldest first (for tests and inspection). */
  records(stream: string): readonly Readonly<Record<string, string>>[] {
    return [...(this.#streams.get(stream) ?? [])];
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#bus.removeAllListeners();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #value(key: string): string | undefined {
    const entry = this.#values.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== undefined && this.#clock() >= entry.expiresAt) {
      this.#values.delete(key);
      return undefined;
    }
    return entry.value;
  }

  #open(): void {
    if (this.#closed) throw new StateUnavailableError('The state store is closed.');
  }
}
