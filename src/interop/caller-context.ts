/**
 * Who an upstream request is made for (issue 41). The gateway runs each caller's calls inside
 * {@link runAsCaller}; a server whose `auth` takes the caller's identity (token exchange, per-caller ID-JAG) reads
 * it in its fetch wrapper with {@link currentCaller} and exchanges it for a token of its own. Outside a caller's
 * work (connect, discovery, list refreshes) there is none: those requests run as the gateway itself.
 *
 * The caller's credential lives here, in memory, for the length of its request only: it is never logged, never
 * stored, and never sent upstream as it is.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What an upstream server's auth gets to know about the caller a request is made for. */
export interface CallerIdentity {
  /** The verified principal's subject (the cache key of its exchanged tokens). */
  readonly subject: string;
  /** How the principal was verified (`jwt` callers carry a token that can be exchanged). */
  readonly via: string;
  /** The bearer token the gateway's front door verified; undefined for callers without one (mTLS, stdio). */
  readonly token: string | undefined;
  /** The names of `server`'s tools the caller's capability set could allow (scopes are narrowed to these). */
  allowedTools(server: string): readonly string[];
  /** Told when the caller's identity could not be carried to `server`: the upstream was not called. */
  refused?(event: { server: string; tool: string | undefined; reason: string; code: string }): void;
}

const storage = new AsyncLocalStorage<CallerIdentity>();

/** Runs `work` (and everything it starts) as `caller`. */
export function runAsCaller<T>(caller: CallerIdentity, work: () => T): T {
  return storage.run(caller, work);
}

/** The caller the current work runs for, or undefined outside any caller's work. */
export function currentCaller(): CallerIdentity | undefined {
  return storage.getStore();
}
