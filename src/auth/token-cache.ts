/**
 * Tokens minted per caller (issue 41), kept in memory until they expire minus a skew: bounded (least recently used
 * go first), and concurrent requests for one key share one exchange. Nothing here is ever written anywhere.
 */

/** A token and when it stops being used (epoch ms); `undefined`: used once, never kept. */
export interface MintedToken {
  readonly token: string;
  readonly expiresAt: number | undefined;
}

/** Options of {@link TokenCache}. */
export interface TokenCacheOptions {
  /** Tokens kept at most. */
  maxEntries: number;
  /** A token is used until this long before it expires. */
  skewMs: number;
  /** The clock. @default Date.now */
  now?: (() => number) | undefined;
}

export class TokenCache {
  readonly #entries = new Map<string, MintedToken>();
  readonly #pending = new Map<string, Promise<MintedToken>>();
  readonly #options: TokenCacheOptions;
  readonly #now: () => number;

  constructor(options: TokenCacheOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Tokens held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The token kept for `key` while it is fresh, else the one `mint` gives (one `mint` at a time per key). */
  async get(key: string, mint: () => Promise<MintedToken>): Promise<string> {
    const kept = this.#entries.get(key);
    if (kept !== undefined) {
      this.#entries.delete(key);
      if (this.#fresh(kept)) {
        // Re-inserted: the map's order is the recency order.
        this.#entries.set(key, kept);
        return kept.token;
      }
    }
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      pending = mint().finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
      const minted = await pending;
      if (this.#fresh(minted)) {
        this.#entries.set(key, minted);
        while (this.#entries.size > this.#options.maxEntries) {
          const oldest = this.#entries.keys().next().value as string;
          this.#entries.delete(oldest);
        }
      }
      return minted.token;
    }
    return (await pending).token;
  }

  clear(): void {
    this.#entries.clear();
  }

  #fresh(token: MintedToken): boolean {
    return token.expiresAt !== undefined && this.#now() < token.expiresAt - this.#options.skewMs;
  }
}
