/**
 * Options of the gateway's throttle on failed authentication, one zod schema each: `gateway.auth.failedAttempts`
 * (how many credentials an address may have refused before its credentials are refused unread) and
 * `gateway.http.trustedProxies` (the proxies whose `X-Forwarded-For` names the caller's address).
 */
import { isIP } from 'node:net';
import { z } from 'zod';

export const DEFAULT_FAILED_ATTEMPTS = { max: 10, windowMs: 60_000, blockMs: 300_000 } as const;

export const FailedAttemptsSchema = z
  .union([
    z.literal(false),
    z.strictObject({
      max: z
        .number()
        .int()
        .min(1)
        .max(10_000)
        .default(DEFAULT_FAILED_ATTEMPTS.max)
        .describe('Refused credentials from one address within `windowMs` before it is blocked.'),
      windowMs: z
        .number()
        .int()
        .min(1_000)
        .max(86_400_000)
        .default(DEFAULT_FAILED_ATTEMPTS.windowMs)
        .describe('The window the refusals are counted in, in milliseconds.'),
      blockMs: z
        .number()
        .int()
        .min(1_000)
        .max(86_400_000)
        .default(DEFAULT_FAILED_ATTEMPTS.blockMs)
        .describe(
          'How long a blocked address gets 429 for every credential it sends, unread, in milliseconds.',
        ),
    }),
  ])
  .default(DEFAULT_FAILED_ATTEMPTS)
  .describe(
    "Online guessing of API keys and tokens: an address whose bearer credentials were refused `max` times within `windowMs` gets 429 for every credential it sends during `blockMs`, without the credential being checked (on the MCP endpoint, `/metrics` and the console's sign-in). Counted per address (an IPv6 address by its /64), in the fleet's store too when the gateway has one. `false` turns it off.",
  );

export type FailedAttemptsConfig = z.output<typeof FailedAttemptsSchema>;

/** `a.b.c.d`, an IPv6 address, or either with `/prefix`. */
function isAddressOrRange(entry: string): boolean {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash < 0) return true;
  const prefix = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export const TrustedProxiesSchema = z
  .array(
    z.string().refine(isAddressOrRange, {
      message: 'write an IP address or a CIDR range, e.g. 10.0.0.7, 10.0.0.0/8 or fd00::/8',
    }),
  )
  .max(1_000)
  .describe(
    'Addresses and CIDR ranges of the proxies (load balancers) in front of the gateway. A request from one of them is attributed to the address its `X-Forwarded-For` names (the last one that is not itself a trusted proxy); from anywhere else `X-Forwarded-For` is ignored. Used to count failed authentication per caller, not per balancer, and to name the caller in the console’s audit records.',
  );
