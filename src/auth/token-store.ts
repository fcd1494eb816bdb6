/**
 * Pluggable storage for OAuth state (issue 9): tokens, client registration, PKCE verifier and discovery results,
 * one entry per MCP server URL. Memory by default; {@link FileTokenStore} keeps them in a 0600 file for the CLI.
 */
import type {
  FetchLike,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { AuthError } from '../errors.js';
import { isJsonObject } from '../json.js';
import { readPrivateFile, writePrivateFile } from '../private-file.js';
import type { StateStore } from '../state/types.js';

/** What is kept for one server. Secrets: never log an entry. */
export interface StoredOAuthState {
  /** The last tokens obtained, stamped with the `issuer` of the authorization server that issued them. */
  tokens?: StoredOAuthTokens | undefined;
  /**
   * When the access token expires, in ms since the epoch: the time it was saved plus its `expires_in`. Absent when
   * the server gave no lifetime.
   */
  expiresAt?: number | undefined;
  /** The client registration used last, stamped with its authorization server's `issuer`. */
  clientInformation?: StoredOAuthClientInformation | undefined;
  /**
   * Client registrations by the `issuer` of the authorization server that issued them (MCP 2026-07-28
   * authorization, SEP-2352): a client id is only ever presented to the authorization server it came from.
   */
  clients?: Record<string, StoredOAuthClientInformation> | undefined;
  /**
   * By configured (pre-registered) client id: the authorization server it was first used with, when the config
   * names none (`auth.issuer`). The client is never sent to another one.
   */
  configuredClients?: Record<string, string> | undefined;
  codeVerifier?: string | undefined;
  discoveryState?: OAuthDiscoveryState | undefined;
  /** Scopes a server asked for with `insufficient_scope` (step-up), kept until a token carries them. */
  requiredScope?: string | undefined;
}

/** Storage of OAuth state keyed by server (the canonical server URL). */
export interface TokenStore {
  load(key: string): Promise<StoredOAuthState | undefined>;
  save(key: string, state: StoredOAuthState): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Runs a token refresh for `key` while no other process refreshes it (issue 16). Stores shared by several
   * processes implement it; with it, a refresh first looks whether another process already got a fresh token.
   */
  withRefreshLock?<T>(key: string, refresh: () => Promise<T>): Promise<T>;
}

/** Keeps state in memory for the life of the process. The default. */
export class MemoryTokenStore implements TokenStore {
  readonly #entries = new Map<string, StoredOAuthState>();

  async load(key: string): Promise<StoredOAuthState | undefined> {
    const entry = this.#entries.get(key);
    return entry === undefined ? undefined : structuredClone(entry);
  }

  async save(key: string, state: StoredOAuthState): Promise<void> {
    this.#entries.set(key, structuredClone(state));
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }
}

/**
 * Keeps state in one JSON file readable only by its owner (mode 0600, directory 0700 when created). Writes go to a
 * temporary file created exclusively under a random name and are renamed into place, so a crash never leaves half
 * a file and a symlink planted beside it receives nothing. A token file that is a symlink or readable by group or
 * others is refused with `INVALID_CONFIG`.
 */
export class FileTokenStore implements TokenStore {
  readonly path: string;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  async load(key: string): Promise<StoredOAuthState | undefined> {
    await this.#queue;
    return (await this.#read())[key];
  }

  save(key: string, state: StoredOAuthState): Promise<void> {
    return this.#update((all) => {
      all[key] = state;
    });
  }

  delete(key: string): Promise<void> {
    return this.#update((all) => {
      delete all[key];
    });
  }

  #update(change: (all: Record<string, StoredOAuthState>) => void): Promise<void> {
    const next = this.#queue.then(async () => {
      const all = await this.#read();
      change(all);
      await writePrivateFile(this.path, `${JSON.stringify(all, null, 2)}\n`);
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  async #read(): Promise<Record<string, StoredOAuthState>> {
    const text = await readPrivateFile(this.path, 'the token file');
    if (text === undefined) return Object.create(null) as Record<string, StoredOAuthState>;
    const parsed: unknown = JSON.parse(text);
    if (!isJsonObject(parsed)) {
      // The message names the file only: its content holds secrets.
      throw new AuthError(
        'credentials_unreadable',
        `Token store ${this.path} is not a JSON object; delete it to sign in again.`,
      );
    }
    return Object.assign(Object.create(null), parsed) as Record<string, StoredOAuthState>;
  }
}

/** Options of {@link StateTokenStore}. */
export interface StateTokenStoreOptions {
  /** How long the refresh lock holds if its holder dies mid-refresh. @default 30 000 ms */
  refreshLockTtlMs?: number | undefined;
  /** How long a process waits for another's refresh before failing with `STATE_UNAVAILABLE`. @default 30 000 ms */
  refreshLockWaitMs?: number | undefined;
}

/** How long the refresh lock holds by default: longer than a token request may take. */
export const DEFAULT_REFRESH_LOCK_TTL_MS = 30_000;

/**
 * Keeps OAuth state in a shared state store (Redis, issue 16), so every process and host of a fleet uses the same
 * tokens, and one of them at a time refreshes them: the others wait for its lock and reuse the token it got.
 * Tokens are secrets: protect the store (ACL, TLS, a private network) as you would the token file.
 */
export class StateTokenStore implements TokenStore {
  readonly #store: Pick<StateStore, 'get' | 'set' | 'delete' | 'withLock'>;
  readonly #ttlMs: number;
  readonly #waitMs: number;

  constructor(
    store: Pick<StateStore, 'get' | 'set' | 'delete' | 'withLock'>,
    options: StateTokenStoreOptions = {},
  ) {
    this.#store = store;
    this.#ttlMs = options.refreshLockTtlMs ?? DEFAULT_REFRESH_LOCK_TTL_MS;
    this.#waitMs = options.refreshLockWaitMs ?? DEFAULT_REFRESH_LOCK_TTL_MS;
  }

  async load(key: string): Promise<StoredOAuthState | undefined> {
    const text = await this.#store.get(`oauth:${key}`);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as StoredOAuthState;
    } catch {
      // The message names the key only: the value holds secrets.
      throw new AuthError(
        'credentials_unreadable',
        `The shared OAuth state of ${key} is not JSON; delete it to sign in again.`,
      );
    }
  }

  async save(key: string, state: StoredOAuthState): Promise<void> {
    await this.#store.set(`oauth:${key}`, JSON.stringify(state));
  }

  async delete(key: string): Promise<void> {
    await this.#store.delete(`oauth:${key}`);
  }

  withRefreshLock<T>(key: string, refresh: () => Promise<T>): Promise<T> {
    return this.#store.withLock(`oauth-refresh:${key}`, refresh, {
      ttlMs: this.#ttlMs,
      waitMs: this.#waitMs,
    });
  }
}

/** Seconds of life a reused token must have left to be handed out instead of refreshing. */
const MIN_REUSED_LIFETIME_S = 5;

/**
 * The refresh hook (issue 16, "one host refreshes a token at a time"): wraps a server's fetch so that a
 * `refresh_token` grant runs under the store's refresh lock. Inside the lock the stored state is read first; when
 * another process already refreshed (the stored refresh token was rotated, or the stored access token is not the
 * one this server refused), its tokens are answered as the token response and the authorization server is not
 * asked. Otherwise the refresh is sent and its tokens are stored before the lock is released, so the next holder
 * sees them. Without `withRefreshLock` on the store, `fetch` is returned as is.
 */
export function shareTokenRefresh(
  fetch: FetchLike,
  options: { store: TokenStore; key: string; serverUrl: string; clock?: (() => number) | undefined },
): FetchLike {
  const { store, key } = options;
  if (store.withRefreshLock === undefined) return fetch;
  const origin = new URL(options.serverUrl).origin;
  const clock = options.clock ?? Date.now;
  let refused: string | undefined;
  return async (url, init) => {
    const body = init?.body;
    const refreshToken =
      body instanceof URLSearchParams && body.get('grant_type') === 'refresh_token'
        ? body.get('refresh_token')
        : null;
    if (refreshToken === null) {
      const response = await fetch(url, init);
      if (response.status === 401 && new URL(String(url)).origin === origin) {
        refused = /^bearer\s+(.+)$/i.exec(new Headers(init?.headers).get('authorization') ?? '')?.[1];
      }
      return response;
    }
    return (store.withRefreshLock as NonNullable<TokenStore['withRefreshLock']>)(key, async () => {
      const stored = await store.load(key);
      const tokens = stored?.tokens;
      const left =
        stored?.expiresAt === undefined ? undefined : Math.floor((stored.expiresAt - clock()) / 1000);
      const refreshedElsewhere =
        tokens !== undefined &&
        (tokens.refresh_token !== refreshToken || (refused !== undefined && tokens.access_token !== refused));
      if (refreshedElsewhere && (left === undefined || left >= MIN_REUSED_LIFETIME_S)) {
        const { issuer: _issuer, ...answer } = tokens as StoredOAuthTokens & { issuer?: unknown };
        return Response.json({ ...answer, ...(left === undefined ? {} : { expires_in: left }) });
      }
      const response = await fetch(url, init);
      if (response.ok) {
        const fresh = (await response
          .clone()
          .json()
          .catch(() => undefined)) as StoredOAuthTokens | undefined;
        if (typeof fresh?.access_token === 'string') {
          const lifetime = fresh.expires_in;
          // The issuer stamp the SDK put on the tokens (SEP-2352) stays: the refresh came from the same issuer.
          const issuer = (tokens as { issuer?: unknown } | undefined)?.issuer;
          await store.save(key, {
            ...stored,
            tokens: {
              ...fresh,
              refresh_token: fresh.refresh_token ?? refreshToken,
              ...(issuer === undefined ? {} : { issuer }),
            } as StoredOAuthTokens,
            expiresAt: typeof lifetime === 'number' ? clock() + lifetime * 1000 : undefined,
          });
        }
      }
      return response;
    });
  };
}
