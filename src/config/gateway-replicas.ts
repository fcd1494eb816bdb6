/**
 * Options of the gateway's replicas (issue 41), one zod schema that is also the project file's `gateway.replicas`
 * section: the process's id among the fleet's gateways, the key that seals the state callers echo (the same on
 * every replica), and how long a replica waits for the one that holds a caller's parked call.
 */
import { z } from 'zod';

/** How long a replica waits for the holder of a parked call to take a forwarded answer. */
export const DEFAULT_REPLICA_ACK_TIMEOUT_MS = 2_000;
/** How long a replica waits for the holder's next step (the result, a failure or the next question). */
export const DEFAULT_REPLICA_ROUTE_TIMEOUT_MS = 300_000;

export const GatewayReplicasOptionsSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'a replica id is 1 to 64 letters, digits, dots, dashes or underscores')
      .optional()
      .describe(
        "This process's name among the fleet's gateways, named in the state its callers echo. Default: a random id per process. Give each replica its own.",
      ),
    stateKey: z
      .string()
      .refine((key) => Buffer.byteLength(key, 'utf8') >= 32, {
        message: 'the state key needs at least 32 bytes; generate one with `openssl rand -hex 32`',
      })
      .optional()
      .describe(
        "The key that seals the state a caller echoes between rounds of a call, the same on every replica. Write it as a variable reference (dollar sign and braces) so it stays out of the file. Default: with a `state` section, one key created once in the fleet's store and read by every replica; without one, a random key per process.",
      ),
    ackTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(DEFAULT_REPLICA_ACK_TIMEOUT_MS)
      .describe(
        "How long a replica waits for the process that holds a caller's call to take the caller's answer, in milliseconds. A holder that does not (it is gone) fails the round with REPLICA_UNAVAILABLE.",
      ),
    routeTimeoutMs: z
      .number()
      .int()
      .min(1_000)
      .max(3_600_000)
      .default(DEFAULT_REPLICA_ROUTE_TIMEOUT_MS)
      .describe(
        "How long a replica waits for the holder's next step after it took the answer (the result, a failure, or the next question), in milliseconds; then the round fails with REPLICA_UNAVAILABLE and the holder cancels the call.",
      ),
  })
  .describe(
    "Several `interlock serve --http` processes behind one balancer, none sticky: a caller's answer to a relayed question reaches the process that holds its call through the fleet's store (the project's `state` section).",
  );

export type GatewayReplicasOptions = z.input<typeof GatewayReplicasOptionsSchema>;
export type GatewayReplicasConfig = z.output<typeof GatewayReplicasOptionsSchema>;
