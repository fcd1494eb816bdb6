/**
 * Options of the gateway's operator console (issue 41), one zod schema that is also the project file's
 * `gateway.console` section: where the console is served (a path on the gateway's listener, or a listener of its
 * own) and how browser sessions are kept. Off unless the section is there; on a non-loopback address the gateway
 * refuses it unless callers authenticate and `gateway.operators` names who may use it.
 */
import { z } from 'zod';

/** How long a console session lasts after sign-in. */
export const DEFAULT_CONSOLE_SESSION_TTL_MS = 8 * 60 * 60_000;
/** How many console sessions are held at once; signing in beyond it ends the oldest. */
export const DEFAULT_CONSOLE_MAX_SESSIONS = 256;
/** How many recent decisions the live view keeps in memory. */
export const DEFAULT_CONSOLE_RECENT_DECISIONS = 500;

export const GatewayConsoleOptionsSchema = z
  .strictObject({
    path: z
      .string()
      .regex(
        /^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/,
        'a path such as /console: a slash, then path segments',
      )
      .optional()
      .describe("Serve the console at this path on the gateway's own HTTP listener, e.g. `/console`."),
    listen: z
      .strictObject({
        host: z.string().min(1).default('127.0.0.1').describe('The address the console listens on.'),
        port: z.number().int().min(0).max(65_535).describe('The port; 0 for any free one.'),
      })
      .optional()
      .describe(
        "Serve the console on a listener of its own (with the gateway's TLS settings, if any), at `/`.",
      ),
    sessionTtlMs: z
      .number()
      .int()
      .min(60_000)
      .max(7 * 24 * 60 * 60_000)
      .default(DEFAULT_CONSOLE_SESSION_TTL_MS)
      .describe('How long a console session lasts after sign-in, in milliseconds.'),
    maxSessions: z
      .number()
      .int()
      .positive()
      .max(100_000)
      .default(DEFAULT_CONSOLE_MAX_SESSIONS)
      .describe('How many console sessions are held at once; a sign-in beyond it ends the oldest session.'),
    recentDecisions: z
      .number()
      .int()
      .positive()
      .max(100_000)
      .default(DEFAULT_CONSOLE_RECENT_DECISIONS)
      .describe('How many recent decisions the live view keeps in memory (a bounded ring).'),
    auditStream: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Show the decisions of every replica: the name of the fleet's audit stream (the `audit` section's stream sink, under state.redis.keyPrefix), read from the fleet's store. Without it the live view shows this process's decisions.",
      ),
  })
  .refine((c) => (c.path === undefined) !== (c.listen === undefined), {
    message: 'give exactly one of path (on the gateway listener) and listen (a listener of its own)',
  })
  .describe(
    "The operator console (issue 41): servers, each principal's tools, live decisions, blocked tool changes, the shared policy, quotas. Off unless given; on a non-loopback address it needs `auth` (or client certificates) and `operators`.",
  );

export type GatewayConsoleOptions = z.input<typeof GatewayConsoleOptionsSchema>;
export type GatewayConsoleConfig = z.output<typeof GatewayConsoleOptionsSchema>;
