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
export const RedisStateStoreOptionsSchema = z
  .strictObject({
    url: z
      .string()
      .refine((u) => URL.canParse(u) && /^rediss?:$/.test(new URL(u).protocol), {
        message: "a redis:// or rediss:// URL, such as 'redis://127.0.0.1:6379'",
      })
      .describe(
        '`redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. The password is never printed (in a project file, write it as a variable reference).',
      ),
    keyPrefix: z
      .string()
      .min(1)
      .max(128)
      .default(DEFAULT_KEY_PREFIX)
      .describe('Prefix of every key and channel: processes share state only under the same prefix.'),
    tls: z
      .strictObject({
        ca: z.string().optional().describe('Extra trusted CA certificate (PEM text).'),
        cert: z.string().optional().describe('Client certificate (PEM text).'),
        key: z
          .string()
          .optional()
          .describe('Private key (PEM text) of the client certificate. Never printed.'),
        servername: z.string().optional().describe('Server name to check the certificate against.'),
      })
      .optional()
      .describe('TLS to the server (implied by `rediss://`): extra CA, client certificate, or server name.'),
    connectTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(60_000)
      .default(DEFAULT_REDIS_CONNECT_TIMEOUT_MS)
      .describe('Time a connection attempt may take, in milliseconds.'),
    commandTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(60_000)
      .default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS)
      .describe('Time one command may take before it fails with STATE_UNAVAILABLE, in milliseconds.'),
  })
  .describe('Options of the Redis (or Valkey) state store.');

export type RedisStateStoreOptions = z.input<typeof RedisStateStoreOptionsSchema>;

/** Most units one lease asks for by default. */
export const DEFAULT_LEASE_MAX_BLOCK = 8192;
/** How long unspent leased units stay with a quiet process by default. */
export const DEFAULT_LEASE_IDLE_MS = 1_000;

/** Leased quota units (issue 41) of a `FleetQuotaCounter`, validated once. */
export const QuotaLeaseSchema = z
  .strictObject({
    maxBlock: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(DEFAULT_LEASE_MAX_BLOCK)
      .describe(
        'Most units one lease takes from the store. Blocks start at 1, grow while callers wait for units, and shrink near the limit (to 1 unit) and when the process is quiet.',
      ),
    idleMs: z
      .number()
      .int()
      .min(1)
      .max(600_000)
      .default(DEFAULT_LEASE_IDLE_MS)
      .describe(
        'Unspent units go back to the fleet after this many milliseconds without a decision on their quota.',
      ),
  })
  .describe(
    'Leases: each process takes blocks of units from the store and decides locally, so most quota decisions need no round trip; the fleet never exceeds the quota.',
  );
