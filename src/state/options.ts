/**
 * Options of the Redis state store, apart from the client so that reading a project file never loads ioredis.
 */
import { z } from 'zod';

/** Prefix of every key and channel by default. */
export const DEFAULT_KEY_PREFIX = 'interlock:';
/** Time a connection attempt may take. */
export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** Time one command may take before it fails with `STATE_UNAVAILABLE`. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** Longest pause between two reconnect attempts. */
export const MAX_REDIS_RECONNECT_DELAY_MS = 2_000;

/** Options of {@link RedisStateStore.connect}, validated once. */
export const RedisStateStoreOptionsSchema = z.strictObject({
  /** `redis://[user:password@]host:port[/db]` or `rediss://` for TLS. */
  url: z.string().refine((u) => URL.canParse(u) && /^rediss?:$/.test(new URL(u).protocol), {
    message: "a redis:// or rediss:// URL, such as 'redis://127.0.0.1:6379'",
  }),
  /** Prefix of every key and channel: processes share state only under the same prefix. */
  keyPrefix: z.string().min(1).max(128).default(DEFAULT_KEY_PREFIX),
  /** TLS to the server (implied by `rediss://`): extra CA, client certificate, or server name. */
  tls: z
    .strictObject({
      ca: z.string().optional(),
      cert: z.string().optional(),
      key: z.string().optional(),
      servername: z.string().optional(),
    })
    .optional(),
  connectTimeoutMs: z.number().int().positive().max(60_000).default(DEFAULT_REDIS_CONNECT_TIMEOUT_MS),
  commandTimeoutMs: z.number().int().positive().max(60_000).default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
});

export type RedisStateStoreOptions = z.input<typeof RedisStateStoreOptionsSchema>;
