/**
 * The throttle on failed authentication (`gateway.auth.failedAttempts`): API keys and tokens cannot be guessed
 * online only if guessing is slow. Each address whose bearer credentials were refused `max` times within a window
 * is blocked for `blockMs`: every credential it sends meanwhile is answered 429 without being checked, so a
 * block also says nothing about the credential. Requests without a credential and client certificates are not
 * counted or blocked (neither is a guess).
 *
 * The address is the peer's, or behind `gateway.http.trustedProxies` the one `X-Forwarded-For` names
 * ({@link CallerAddresses}); an IPv6 address counts by its /64 (one host usually has the whole prefix). Counts are
 * kept in the process, in a bounded table, and with the fleet's store also in the store (its atomic windowed
 * counter), so that a fleet of replicas behind a balancer blocks an address after `max` refusals in all, not `max` on
 * each: a replica blocks it when its own count or the fleet's reaches `max`, and tells the others on the store's
 * channel, so that they refuse its next credential unread too instead of checking one more guess each. A store
 * that cannot answer leaves the process's count to decide.
 */
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';
import type { FailedAttemptsConfig } from '../config/gateway-throttle.js';
import type { StateStore } from '../state/types.js';

/** What the throttle reads of a request: its headers as sent, and the socket's peer. */
export interface ThrottledRequest {
  readonly rawHeaders: readonly string[];
  readonly socket: unknown;
}

/**
 * Where a request comes from: the peer's address, or, when the peer is one of `gateway.http.trustedProxies`, the
 * last address of `X-Forwarded-For` that is not a trusted proxy itself (walking from the right: the entries to its
 * left are the caller's to write). An entry that is no address stops the walk at the proxy that added it.
 * IPv4-mapped IPv6 reads as IPv4; ports and brackets are taken off.
 */
export class CallerAddresses {
  readonly #proxies: BlockList | undefined;

  constructor(trustedProxies: readonly string[] = []) {
    this.#proxies = proxyList(trustedProxies);
  }

  of(request: ThrottledRequest): string {
    let address = normalize((request.socket as { remoteAddress?: string } | undefined)?.remoteAddress ?? '');
    const proxies = this.#proxies;
    if (proxies === undefined || !isTrusted(proxies, address)) return address;
    const hops = forwardedFor(request.rawHeaders);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalize(hops[i] ?? '');
      if (isIP(hop) === 0) break;
      address = hop;
      if (!isTrusted(proxies, hop)) break;
    }
    return address;
  }
}

/** Options of {@link AuthThrottle}. */
export interface AuthThrottleOptions {
  limits: Exclude<FailedAttemptsConfig, false>;
  /** The fleet's store: counts there too, so the bound is the fleet's. */
  store?: StateStore | undefined;
  /** Told once each time an address becomes blocked (for the log). */
  onBlocked?: ((address: string, failures: number) => void) | undefined;
  /** The most addresses the process keeps counts for. @default 10 000 */
  maxAddresses?: number | undefined;
  now?: (() => number) | undefined;
}

interface Count {
  windowStart: number;
  failures: number;
  blockedUntil: number;
}

const STORE_KEY = 'auth-failures:';
/** The store's channel on which a replica that blocks an address tells the others. */
const BLOCKED_CHANNEL = 'auth-blocked';
/** A block told on {@link BLOCKED_CHANNEL}: the address's key and how long it stays blocked (no clock is shared). */
const BlockedMessageSchema = z.object({
  address: z.string().min(1).max(64),
  ms: z.number().int().positive(),
});
const DEFAULT_MAX_ADDRESSES = 10_000;

export class AuthThrottle {
  readonly #limits: Exclude<FailedAttemptsConfig, false>;
  readonly #store: StateStore | undefined;
  readonly #onBlocked: ((address: string, failures: number) => void) | undefined;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  /** In insertion order: the first entry is the one counted longest ago. */
  readonly #counts = new Map<string, Count>();
  #unsubscribe: (() => Promise<void>) | undefined;

  constructor(options: AuthThrottleOptions) {
    this.#limits = options.limits;
    this.#store = options.store;
    this.#onBlocked = options.onBlocked;
    this.#maxAddresses = options.maxAddresses ?? DEFAULT_MAX_ADDRESSES;
    this.#now = options.now ?? Date.now;
  }

  /**
   * With the fleet's store: listens for the blocks other replicas make, so this one refuses the blocked address's
   * next credential unread as well. Throws `STATE_UNAVAILABLE` when the store cannot subscribe.
   */
  async share(): Promise<void> {
    if (this.#store === undefined || this.#unsubscribe !== undefined) return;
    this.#unsubscribe = await this.#store.subscribe(BLOCKED_CHANNEL, (message) => this.#told(message));
  }

  /** Stops listening for other replicas' blocks. */
  async close(): Promise<void> {
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    await unsubscribe?.();
  }

  /** How long the address stays blocked, in ms (0: not blocked). */
  blockedFor(address: string): number {
    const count = this.#counts.get(keyOf(address));
    if (count === undefined) return 0;
    return Math.max(0, count.blockedUntil - this.#now());
  }

  /** Counts a credential refused from `address`; at `max` refusals (here or in the fleet) the address is blocked. */
  async failed(address: string): Promise<void> {
    const key = keyOf(address);
    const now = this.#now();
    const { max, windowMs, blockMs } = this.#limits;
    let count = this.#counts.get(key);
    if (count === undefined || now - count.windowStart >= windowMs) {
      // A new window; a block still running stays.
      count = { windowStart: now, failures: 0, blockedUntil: count?.blockedUntil ?? 0 };
      this.#remember(key, count);
    }
    count.failures++;
    let fleetFailures = 0;
    if (this.#store !== undefined) {
      try {
        const taken = await this.#store.consume(STORE_KEY + key, max, windowMs);
        // Not allowed: the fleet already had `max` refusals from this address in the window.
        fleetFailures = taken.allowed ? taken.used : max + 1;
      } catch {
        // The process's own count decides while the store cannot answer.
      }
    }
    const failures = Math.max(count.failures, fleetFailures);
    if (failures >= max && count.blockedUntil <= this.#now()) {
      count.blockedUntil = this.#now() + blockMs;
      this.#onBlocked?.(key, failures);
      // The others learn of it now rather than at the next refusal each of them sees (one more guess each).
      this.#store
        ?.publish(BLOCKED_CHANNEL, JSON.stringify({ address: key, ms: blockMs }))
        .catch(() => undefined);
    }
  }

  /** A block another replica made (a message on the store's channel); one not understood is ignored. */
  #told(message: string): void {
    let told: z.infer<typeof BlockedMessageSchema>;
    try {
      told = BlockedMessageSchema.parse(JSON.parse(message));
    } catch {
      return;
    }
    const now = this.#now();
    // Never longer than this process's own block: the message tells of a block, it does not set one's length.
    const until = now + Math.min(told.ms, this.#limits.blockMs);
    const count = this.#counts.get(told.address);
    if (count !== undefined) {
      count.blockedUntil = Math.max(count.blockedUntil, until);
      return;
    }
    this.#remember(told.address, { windowStart: now, failures: 0, blockedUntil: until });
  }

  #remember(key: string, count: Count): void {
    this.#counts.delete(key);
    if (this.#counts.size >= this.#maxAddresses) {
      const now = this.#now();
      // Addresses neither blocked nor in their window first, then the oldest one not blocked (so that flooding
      // the table from many addresses does not free a blocked one), and only then the oldest of all.
      const free = (c: Count) => c.blockedUntil <= now && now - c.windowStart >= this.#limits.windowMs;
      for (const [old, c] of this.#counts) {
        if (free(c)) this.#counts.delete(old);
        if (this.#counts.size < this.#maxAddresses) break;
      }
      if (this.#counts.size >= this.#maxAddresses) {
        let victim = this.#counts.keys().next().value as string;
        for (const [old, c] of this.#counts) {
          if (c.blockedUntil > now) continue;
          victim = old;
          break;
        }
        this.#counts.delete(victim);
      }
    }
    this.#counts.set(key, count);
  }
}

/** The raw `X-Forwarded-For` header pairs of a request (for a probe that must carry them, as the console's). */
export function forwardedHeaders(rawHeaders: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === 'x-forwarded-for') out.push(rawHeaders[i]!, rawHeaders[i + 1] ?? '');
  }
  return out;
}

/** Every address of every `X-Forwarded-For` header, in order (several headers read as one list). */
function forwardedFor(rawHeaders: readonly string[]): string[] {
  const pairs = forwardedHeaders(rawHeaders);
  const hops: string[] = [];
  for (let i = 1; i < pairs.length; i += 2)
    for (const hop of (pairs[i] ?? '').split(',')) hops.push(hop.trim());
  return hops;
}

/** An address as the throttle compares it: IPv4-mapped IPv6 as IPv4, a port or brackets taken off. */
function normalize(raw: string): string {
  let address = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed !== null) address = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(address);
  return mapped === null ? address : mapped[1]!;
}

/** The key an address counts under: an IPv4 address itself, an IPv6 address's /64. */
function keyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expand(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, as written without leading zeros. */
function expand(address: string): string[] {
  const zone = address.indexOf('%');
  const bare = zone < 0 ? address : address.slice(0, zone);
  const [head = '', tail] = bare.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [
    ...left,
    ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'),
    ...right,
  ];
  return groups.map((g) => (g.includes('.') ? g : Number.parseInt(g, 16).toString(16)));
}

function proxyList(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

function isTrusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}
