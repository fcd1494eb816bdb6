/**
 * State in Redis (or Valkey), shared by every process and host that points at the same server and key prefix.
 * Built on ioredis: automatic reconnects with backoff, Lua scripts by SHA, pub/sub that resubscribes after a
 * reconnect. Commands are never queued while disconnected and every command has a timeout, so a store that is
 * down answers `STATE_UNAVAILABLE` at once instead of letting a tool call hang. Counters use the server's clock.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import { ConfigError } from '../errors.js';
import {
  MAX_REDIS_RECONNECT_DELAY_MS,
  type RedisStateStoreOptions,
  RedisStateStoreOptionsSchema,
} from './options.js';
import {
  checkQuotaArgs,
  DEFAULT_LOCK_TTL_MS,
  DEFAULT_LOCK_WAIT_MS,
  DEFAULT_STREAM_MAX_LENGTH,
  type LockOptions,
  type QuotaLease,
  type QuotaResult,
  type StateListener,
  type StateStore,
  StateUnavailableError,
} from './types.js';

// Windows follow the server's clock (TIME), so hosts with skewed clocks still share one window.
const CONSUME = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local key = KEYS[1]
local reset = -1
if window > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local w = math.floor(now / window)
  key = key .. ':' .. w
  reset = (w + 1) * window - now
end
local used = tonumber(redis.call('GET', key) or '0')
if used >= limit then return {0, used, reset} end
used = redis.call('INCR', key)
if window > 0 then redis.call('PEXPIRE', key, window + 1000) end
return {1, used, reset}
`;
// A block of units at once (leases): at most \`want\`, and at most 1/LEASE_SPREAD of what the window has left (at
// least one), so that near the limit units go one at a time to whichever process asks.
const LEASE = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local spread = tonumber(ARGV[4])
local key = KEYS[1]
local reset = -1
local w = 0
if window > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  w = math.floor(now / window)
  key = key .. ':' .. w
  reset = (w + 1) * window - now
end
local used = tonumber(redis.call('GET', key) or '0')
local left = limit - used
if left <= 0 then return {0, used, reset, w} end
local grant = math.min(want, math.ceil(left / spread))
used = redis.call('INCRBY', key, grant)
if window > 0 then redis.call('PEXPIRE', key, window + 1000) end
return {grant, used, reset, w}
`;
// Unused units of a lease go back to the window they came from, if it is still counted (an ended window's key
// expires by itself; it is never recreated here).
const RETURN_LEASE = `
local key = KEYS[1]
if tonumber(ARGV[2]) > 0 then key = key .. ':' .. ARGV[3] end
local used = tonumber(redis.call('GET', key) or '0')
local back = math.min(tonumber(ARGV[1]), used)
if back > 0 then redis.call('DECRBY', key, back) end
return back
`;
/** A lease takes at most this share of what a window has left. */
const LEASE_SPREAD = 8;
const USED = `
local window = tonumber(ARGV[1])
local key = KEYS[1]
if window > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  key = key .. ':' .. math.floor(now / window)
end
return tonumber(redis.call('GET', key) or '0')
`;
// Compare-and-set (issue 38): the check and the write in one script, so no other write can land between them.
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if current then return 0 end
elseif current ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3])
return 1
`;
// Members of a group live in one hash, each value prefixed with its expiry by the server's clock, so hosts with
// skewed clocks agree on who is live.
const PUT_MEMBER = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], (now + ttl) .. '\\n' .. ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl * 2 then redis.call('PEXPIRE', KEYS[1], ttl * 2) end
return 1
`;
const MEMBERS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local cut = string.find(all[i + 1], '\\n', 1, true)
  local expires = cut and tonumber(string.sub(all[i + 1], 1, cut - 1))
  if expires and expires > now then
    table.insert(out, all[i])
    table.insert(out, string.sub(all[i + 1], cut + 1))
  else
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return out
`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type ScriptedRedis = Redis & {
  interlockConsume(key: string, limit: number, windowMs: number): Promise<[number, number, number]>;
  interlockUsed(key: string, windowMs: number): Promise<number>;
  interlockLease(
    key: string,
    limit: number,
    windowMs: number,
    want: number,
    spread: number,
  ): Promise<[number, number, number, number]>;
  interlockReturnLease(key: string, units: number, windowMs: number, window: number): Promise<number>;
  interlockRelease(key: string, token: string): Promise<number>;
  interlockCompareAndSet(
    key: string,
    hasExpected: '0' | '1',
    expected: string,
    value: string,
  ): Promise<number>;
  interlockPutMember(key: string, member: string, ttlMs: number, value: string): Promise<number>;
  interlockMembers(key: string): Promise<string[]>;
};

/** The URL without its password, for messages. */
/** The URL as messages show it: scheme, host, port and database; the username and password masked. */
function shown(url: string): string {
  const u = new URL(url);
  if (u.username !== '') u.username = '***';
  if (u.password !== '') u.password = '***';
  return u.toString();
}

/** State in Redis. Create it with {@link RedisStateStore.connect}. */
export class RedisStateStore implements StateStore {
  readonly #redis: ScriptedRedis;
  readonly #prefix: string;
  readonly #where: string;
  #subscriber: Redis | undefined;
  readonly #listeners = new Map<string, Set<StateListener>>();
  #closed: Promise<void> | undefined;

  private constructor(redis: ScriptedRedis, prefix: string, where: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#where = where;
  }

  /**
   * Connects to Redis and resolves once it answers. Throws `INVALID_CONFIG` for bad options and
   * `STATE_UNAVAILABLE` when the server cannot be reached within `connectTimeoutMs`. After that, lost connections
   * are re-established automatically; commands fail fast while the server is away.
   */
  static async connect(options: RedisStateStoreOptions): Promise<RedisStateStore> {
    const parsed = RedisStateStoreOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: i.path.join('.') || '(root)',
        message: i.message,
      }));
      throw new ConfigError(
        `Invalid Redis state store options: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}.`,
        { issues },
      );
    }
    const o = parsed.data;
    const where = shown(o.url);
    const redisOptions: RedisOptions = {
      keyPrefix: o.keyPrefix,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: o.connectTimeoutMs,
      commandTimeout: o.commandTimeoutMs,
      retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, MAX_REDIS_RECONNECT_DELAY_MS),
      ...(o.tls !== undefined || o.url.startsWith('rediss:') ? { tls: { ...o.tls } } : {}),
    };
    const redis = new Redis(o.url, redisOptions) as ScriptedRedis;
    // Errors are reported by the commands that fail; an unhandled 'error' event would crash the process.
    redis.on('error', () => {});
    redis.defineCommand('interlockConsume', { numberOfKeys: 1, lua: CONSUME });
    redis.defineCommand('interlockUsed', { numberOfKeys: 1, lua: USED });
    redis.defineCommand('interlockLease', { numberOfKeys: 1, lua: LEASE });
    redis.defineCommand('interlockReturnLease', { numberOfKeys: 1, lua: RETURN_LEASE });
    redis.defineCommand('interlockRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('interlockCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET });
    redis.defineCommand('interlockPutMember', { numberOfKeys: 1, lua: PUT_MEMBER });
    redis.defineCommand('interlockMembers', { numberOfKeys: 1, lua: MEMBERS });
    try {
      await redis.connect();
    } catch (err) {
      redis.disconnect();
      const why = (err as Error).message.replace(/\.+$/, '');
      throw new StateUnavailableError(`Cannot reach Redis at ${where}: ${why}.`, {
        cause: err,
      });
    }
    return new RedisStateStore(redis, o.keyPrefix, where);
  }

  consume(key: string, limit: number, windowMs?: number): Promise<QuotaResult> {
    checkQuotaArgs(limit, windowMs);
    return this.#run('consume', async () => {
      const [allowed, used, reset] = await this.#redis.interlockConsume(`quota:${key}`, limit, windowMs ?? 0);
      return { allowed: allowed === 1, used, limit, resetMs: reset < 0 ? undefined : reset };
    });
  }

  lease(key: string, limit: number, want: number, windowMs?: number): Promise<QuotaLease> {
    checkQuotaArgs(limit, windowMs);
    checkQuotaArgs(want, undefined);
    return this.#run('lease quota units', async () => {
      const [granted, used, reset, window] = await this.#redis.interlockLease(
        `quota:${key}`,
        limit,
        windowMs ?? 0,
        want,
        LEASE_SPREAD,
      );
      return { granted, used, resetMs: reset < 0 ? undefined : reset, window };
    });
  }

  returnLease(key: string, units: number, window: number, windowMs?: number): Promise<number> {
    if (units <= 0) return Promise.resolve(0);
    return this.#run('return quota units', () =>
      this.#redis.interlockReturnLease(`quota:${key}`, units, windowMs ?? 0, window),
    );
  }

  used(key: string, windowMs?: number): Promise<number> {
    return this.#run('used', () => this.#redis.interlockUsed(`quota:${key}`, windowMs ?? 0));
  }

  get(key: string): Promise<string | undefined> {
    return this.#run('get', async () => (await this.#redis.get(`kv:${key}`)) ?? undefined);
  }

  set(key: string, value: string, options: { ttlMs?: number | undefined } = {}): Promise<void> {
    return this.#run('set', async () => {
      if (options.ttlMs === undefined) await this.#redis.set(`kv:${key}`, value);
      else await this.#redis.set(`kv:${key}`, value, 'PX', options.ttlMs);
    });
  }

  delete(key: string): Promise<void> {
    return this.#run('delete', async () => {
      await this.#redis.del(`kv:${key}`);
    });
  }

  compareAndSet(key: string, expected: string | undefined, value: string): Promise<boolean> {
    return this.#run('compare and set', async () => {
      const written = await this.#redis.interlockCompareAndSet(
        `kv:${key}`,
        expected === undefined ? '0' : '1',
        expected ?? '',
        value,
      );
      return written === 1;
    });
  }

  putMember(group: string, member: string, value: string, ttlMs: number): Promise<void> {
    return this.#run('record a member', async () => {
      await this.#redis.interlockPutMember(`members:${group}`, member, ttlMs, value);
    });
  }

  members(group: string): Promise<Map<string, string>> {
    return this.#run('list members', async () => {
      const flat = await this.#redis.interlockMembers(`members:${group}`);
      const out = new Map<string, string>();
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i] as string, flat[i + 1] as string);
      return out;
    });
  }

  removeMember(group: string, member: string): Promise<void> {
    return this.#run('remove a member', async () => {
      await this.#redis.hdel(`members:${group}`, member);
    });
  }

  publish(channel: string, message: string): Promise<void> {
    return this.#run('publish', async () => {
      await this.#redis.publish(this.#channel(channel), message);
    });
  }

  async subscribe(channel: string, listener: StateListener): Promise<() => Promise<void>> {
    const full = this.#channel(channel);
    const subscriber = await this.#subscriberConnection();
    let set = this.#listeners.get(full);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(full, set);
      await this.#run('subscribe', () => subscriber.subscribe(full));
    }
    set.add(listener);
    return async () => {
      const current = this.#listeners.get(full);
      if (current === undefined || !current.delete(listener) || current.size > 0) return;
      this.#listeners.delete(full);
      await subscriber.unsubscribe(full).catch(() => undefined);
    };
  }

  async withLock<T>(name: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
    const ttl = options.ttlMs ?? DEFAULT_LOCK_TTL_MS;
    const deadline = Date.now() + (options.waitMs ?? DEFAULT_LOCK_WAIT_MS);
    const key = `lock:${name}`;
    const token = randomUUID();
    for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
      const got = await this.#run('lock', () => this.#redis.set(key, token, 'PX', ttl, 'NX'));
      if (got === 'OK') break;
      if (Date.now() >= deadline)
        throw new StateUnavailableError(`Timed out waiting for the lock '${name}'.`);
      await delay(pause);
    }
    try {
      return await fn();
    } finally {
      // Only our own token is removed: a lock that expired and was taken by another holder stays theirs.
      await this.#redis.interlockRelease(key, token).catch(() => undefined);
    }
  }

  append(
    stream: string,
    record: Readonly<Record<string, string>>,
    maxLength = DEFAULT_STREAM_MAX_LENGTH,
  ): Promise<void> {
    return this.#run('append', async () => {
      await this.#redis.xadd(
        `stream:${stream}`,
        'MAXLEN',
        '~',
        String(maxLength),
        '*',
        ...Object.entries(record).flat(),
      );
    });
  }

  /** The records of a stream, oldest first, up to `count` (for inspection and tests). */
  records(stream: string, count = 1_000): Promise<Record<string, string>[]> {
    return this.#run('records', async () => {
      const entries = await this.#redis.xrange(`stream:${stream}`, '-', '+', 'COUNT', count);
      return entries.map(([, fields]) => {
        const out: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
        return out;
      });
    });
  }

  /**
   * A whole stream, oldest first, with each entry's id, read in pages of `pageSize`; and how many entries were ever
   * added to it (`entries-added`, Redis 7 and later; `undefined` before), so a reader can tell whether any were
   * trimmed or deleted.
   */
  readStream(
    stream: string,
    pageSize = 1_000,
  ): Promise<{ entries: { id: string; fields: Record<string, string> }[]; added: number | undefined }> {
    return this.#run('read the stream', async () => {
      const key = `stream:${stream}`;
      const entries: { id: string; fields: Record<string, string> }[] = [];
      let start = '-';
      for (;;) {
        const page = await this.#redis.xrange(key, start, '+', 'COUNT', pageSize);
        for (const [id, fields] of page) {
          const out: Record<string, string> = {};
          for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
          entries.push({ id, fields: out });
        }
        if (page.length < pageSize) break;
        start = `(${(page[page.length - 1] as [string, string[]])[0]}`;
      }
      if (entries.length === 0) return { entries, added: 0 };
      const info = (await this.#redis.call('XINFO', 'STREAM', key)) as unknown[];
      const at = info.indexOf('entries-added');
      const added = at === -1 ? undefined : Number(info[at + 1]);
      return { entries, added };
    });
  }

  /**
   * The entries of a stream after the entry `after` (oldest first, at most `count`), or without `after` its latest
   * `count` entries: a follower's read (the operator console's live view of the fleet's audit stream).
   */
  tailStream(
    stream: string,
    after: string | undefined,
    count = 500,
  ): Promise<{ id: string; fields: Record<string, string> }[]> {
    return this.#run('read the stream', async () => {
      const key = `stream:${stream}`;
      const page =
        after === undefined
          ? (await this.#redis.xrevrange(key, '+', '-', 'COUNT', count)).reverse()
          : await this.#redis.xrange(key, `(${after}`, '+', 'COUNT', count);
      return page.map(([id, fields]) => {
        const out: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
        return { id, fields: out };
      });
    });
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#listeners.clear();
      await Promise.allSettled([this.#redis.quit(), this.#subscriber?.quit()]);
      this.#redis.disconnect();
      this.#subscriber?.disconnect();
    })();
    return this.#closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #channel(channel: string): string {
    return `${this.#prefix}${channel}`;
  }

  async #subscriberConnection(): Promise<Redis> {
    if (this.#subscriber !== undefined) return this.#subscriber;
    // Subscriptions need a connection of their own; ioredis resubscribes it after every reconnect.
    const subscriber = this.#redis.duplicate({ keyPrefix: undefined });
    subscriber.on('error', () => {});
    subscriber.on('message', (channel: string, message: string) => {
      for (const listener of this.#listeners.get(channel) ?? []) listener(message);
    });
    this.#subscriber = subscriber;
    await this.#run('subscribe', () => subscriber.connect());
    return subscriber;
  }

  async #run<T>(what: string, op: () => Promise<T>): Promise<T> {
    if (this.#closed !== undefined) throw new StateUnavailableError('The state store is closed.');
    try {
      return await op();
    } catch (err) {
      throw new StateUnavailableError(
        `Redis at ${this.#where} could not ${what}: ${(err as Error).message}. Interlock reconnects by itself; check that the server is up.`,
        { cause: err },
      );
    }
  }
}
