/**
 * Console sessions (issue 41): a browser cannot add a bearer header to a navigation, so an operator signs in once
 * with the gateway's own credential and gets a server-side session. The cookie holds only a random id; the table
 * is bounded (a sign-in beyond it ends the oldest session) and every session expires. Each session has its own
 * CSRF token (synchronizer token), compared in constant time.
 *
 * Two tables: this process's ({@link ConsoleSessions}), and the fleet's ({@link FleetConsoleSessions}), kept in the
 * fleet's store so that every replica behind a balancer without stickiness serves the session an operator signed
 * in with on any of them, and a sign-out on one ends it on all.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { StateStore } from '../../state/types.js';
import type { Principal } from '../principals.js';
import type { Notice } from './panels.js';

/** One signed-in operator. */
export interface ConsoleSession {
  readonly id: string;
  readonly csrf: string;
  readonly principal: Principal;
  readonly expiresAt: number;
}

/** Where the console keeps its sessions, and what an action said for the next page of a session. */
export interface ConsoleSessionTable {
  /** A new session for `principal` (a fresh id: an id known before sign-in is never reused). */
  create(principal: Principal): Promise<ConsoleSession>;
  /** The live session with this id, else `undefined`. */
  get(id: string | undefined): Promise<ConsoleSession | undefined>;
  /** Ends a session (and drops its notice). */
  delete(id: string): Promise<void>;
  /** Keeps what an action said for the session's next page (one per session). */
  say(id: string, notice: Notice): Promise<void>;
  /** What the session's last action said, once; `{}` when nothing. */
  notice(id: string): Promise<Notice>;
  /** Forgets what this process holds (the fleet's sessions stay, for the other replicas). */
  clear(): void;
}

/** Options of both tables. */
export interface ConsoleSessionOptions {
  ttlMs: number;
  max: number;
  now?: (() => number) | undefined;
}

/** This process's sessions: the table of a gateway without the fleet's store. */
export class ConsoleSessions implements ConsoleSessionTable {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;
  /** In creation order: the first entry is the oldest. */
  readonly #sessions = new Map<string, ConsoleSession>();
  readonly #notices = new Map<string, Notice>();

  constructor(options: ConsoleSessionOptions) {
    this.#ttlMs = options.ttlMs;
    this.#max = options.max;
    this.#now = options.now ?? Date.now;
  }

  async create(principal: Principal): Promise<ConsoleSession> {
    this.#sweep();
    while (this.#sessions.size >= this.#max) {
      const oldest = this.#sessions.keys().next().value as string;
      await this.delete(oldest);
    }
    const session = newSession(principal, this.#now() + this.#ttlMs);
    this.#sessions.set(session.id, session);
    return session;
  }

  async get(id: string | undefined): Promise<ConsoleSession | undefined> {
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.#now()) {
      await this.delete(id);
      return undefined;
    }
    return session;
  }

  async delete(id: string): Promise<void> {
    this.#sessions.delete(id);
    this.#notices.delete(id);
  }

  async say(id: string, notice: Notice): Promise<void> {
    // Only a live session's: the table stays as bounded as the sessions.
    if (this.#sessions.has(id)) this.#notices.set(id, notice);
  }

  async notice(id: string): Promise<Notice> {
    const notice = this.#notices.get(id) ?? {};
    this.#notices.delete(id);
    return notice;
  }

  clear(): void {
    this.#sessions.clear();
    this.#notices.clear();
  }

  #sweep(): void {
    const now = this.#now();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) void this.delete(id);
  }
}

/** The fleet's table in the store: a session's record, and the group that bounds how many there are. */
const SESSION_KEY = 'console:session:';
const NOTICE_KEY = 'console:notice:';
const SESSION_GROUP = 'console:sessions';
/** How long a notice waits for the page its action redirects to. */
const NOTICE_TTL_MS = 60_000;

const StoredSessionSchema = z.object({
  csrf: z.string().min(1),
  expiresAt: z.number(),
  principal: z.object({
    subject: z.string(),
    clientId: z.string().optional(),
    groups: z.array(z.string()),
    scopes: z.array(z.string()),
    via: z.enum(['jwt', 'api-key', 'mtls', 'stdio', 'none']),
  }),
});
const NoticeSchema = z.object({ done: z.string().optional(), error: z.string().optional() });

/**
 * The fleet's sessions, in the fleet's store: any replica serves a session made on another, a sign-out on one ends
 * it on every one, and the bound holds across the fleet (the oldest sessions end first; replicas signing operators
 * in at the same moment may pass it briefly). The store holds a SHA-256 digest of each session id, never the id:
 * whoever reads the store cannot present a session. A record the store returns malformed is no session (the
 * operator signs in again); a store that cannot answer fails the request (`STATE_UNAVAILABLE`), never lets it in.
 */
export class FleetConsoleSessions implements ConsoleSessionTable {
  readonly #store: StateStore;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(store: StateStore, options: ConsoleSessionOptions) {
    this.#store = store;
    this.#ttlMs = options.ttlMs;
    this.#max = options.max;
    this.#now = options.now ?? Date.now;
  }

  async create(principal: Principal): Promise<ConsoleSession> {
    const now = this.#now();
    const session = newSession(principal, now + this.#ttlMs);
    const digest = digestOf(session.id);
    const { csrf, expiresAt } = session;
    await this.#store.set(SESSION_KEY + digest, JSON.stringify({ csrf, expiresAt, principal }), {
      ttlMs: this.#ttlMs,
    });
    await this.#store.putMember(SESSION_GROUP, digest, String(now), this.#ttlMs);
    const members = await this.#store.members(SESSION_GROUP);
    if (members.size > this.#max) {
      const oldest = [...members]
        .filter(([member]) => member !== digest)
        .sort((a, b) => Number(a[1]) - Number(b[1]))
        .slice(0, members.size - this.#max);
      for (const [member] of oldest) await this.#forget(member);
    }
    return session;
  }

  async get(id: string | undefined): Promise<ConsoleSession | undefined> {
    if (id === undefined || id === '') return undefined;
    const text = await this.#store.get(SESSION_KEY + digestOf(id));
    if (text === undefined) return undefined;
    const stored = StoredSessionSchema.safeParse(parseJson(text));
    if (!stored.success || stored.data.expiresAt <= this.#now()) return undefined;
    const { csrf, expiresAt, principal } = stored.data;
    return { id, csrf, expiresAt, principal };
  }

  delete(id: string): Promise<void> {
    return this.#forget(digestOf(id));
  }

  async say(id: string, notice: Notice): Promise<void> {
    await this.#store.set(NOTICE_KEY + digestOf(id), JSON.stringify(notice), {
      ttlMs: Math.min(NOTICE_TTL_MS, this.#ttlMs),
    });
  }

  async notice(id: string): Promise<Notice> {
    const key = NOTICE_KEY + digestOf(id);
    const text = await this.#store.get(key);
    if (text === undefined) return {};
    await this.#store.delete(key);
    const notice = NoticeSchema.safeParse(parseJson(text));
    return notice.success ? notice.data : {};
  }

  clear(): void {}

  async #forget(digest: string): Promise<void> {
    await this.#store.delete(SESSION_KEY + digest);
    await this.#store.delete(NOTICE_KEY + digest);
    await this.#store.removeMember(SESSION_GROUP, digest);
  }
}

/** Whether the CSRF token a form sent is the session's (constant time; any other shape is no). */
export function csrfMatches(session: ConsoleSession, sent: unknown): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The session cookie's name: `__Host-` on HTTPS, where a browser allows it. */
export function cookieName(secure: boolean): string {
  return secure ? '__Host-interlock-console' : 'interlock-console';
}

/** The value of the cookie `name` a request carries. */
export function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function newSession(principal: Principal, expiresAt: number): ConsoleSession {
  return { id: token(), csrf: token(), principal, expiresAt };
}

function token(): string {
  return randomBytes(32).toString('base64url');
}

function digestOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
