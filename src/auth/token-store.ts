/**
 * Pluggable storage for OAuth state (issue 9): tokens, client registration, PKCE verifier and discovery results,
 * one entry per MCP server URL. Memory by default; {@link FileTokenStore} keeps them in a 0600 file for the CLI.
 */
import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { readPrivateFile, writePrivateFile } from '../private-file.js';

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
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      // The message names the file only: its content holds secrets.
      throw new Error(`Token store ${this.path} is not a JSON object; delete it to sign in again.`);
    }
    return Object.assign(Object.create(null), parsed) as Record<string, StoredOAuthState>;
  }
}
