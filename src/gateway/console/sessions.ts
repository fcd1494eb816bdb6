/**
 * Console sessions (issue 41): a browser cannot add a bearer header to a navigation, so an operator signs in once
 * with the gateway's own credential and gets a server-side session. The cookie holds only a random id; the table
 * is bounded (a sign-in beyond it ends the oldest session) and every session expires. Each session has its own
 * CSRF token (synchronizer token), compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../principals.js';

/** One signed-in operator. */
export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  readonly principal: Principal;
  readonly expiresAt: number;
}

export class ConsoleSessions {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;
  /** In creation order: the first entry is the oldest. */
  readonly #sessions = new Map<string, ConsoleSession>();

  constructor(options: { ttlMs: number; max: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#max = options.max;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** A new session for `principal` (a fresh id: an id known before sign-in is never reused). */
  create(principal: Principal): ConsoleSession {
    this.#sweep();
    while (this.#sessions.size >= this.#max) {
      const oldest = this.#sessions.keys().next().value as string;
      this.#sessions.delete(oldest);
    }
    const session: ConsoleSession = {
      id: token(),
      csrf: token(),
      principal,
      expiresAt: this.#now() + this.#ttlMs,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id, else `undefined` (an expired one is dropped). */
  get(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.#now()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }

  clear(): void {
    this.#sessions.clear();
  }

  #sweep(): void {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#sessions.delete(id);
  }
}

/** Whether the CSRF token a form sent is the session's (constant time; any other shape is no). */
export function csrfMatches(session: ConsoleSession, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

function token(): string {
  return randomBytes(32).toString('base64url');
}
