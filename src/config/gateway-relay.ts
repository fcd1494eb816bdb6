/**
 * Options of the gateway's {@link ServerRequestRelay} (issue 38), one zod schema that is also the project file's
 * `gateway.serverRequests` section: how long a call waits for its caller's answer, how many calls may wait at
 * once (per caller and in all), and which servers' requests that name no call may still be routed.
 */
import { z } from 'zod';

/** How long a call waits for the downstream client's answer to a relayed request (a person answers these). */
export const DEFAULT_INPUT_TIMEOUT_MS = 600_000;
/** How many calls of one caller may wait for its answers at once. */
export const DEFAULT_MAX_PARKED_CALLS_PER_PRINCIPAL = 16;
/** How many calls of all callers may wait for answers at once. */
export const DEFAULT_MAX_PARKED_CALLS = 1_000;

export const ServerRequestRelayOptionsSchema = z
  .strictObject({
    inputTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_INPUT_TIMEOUT_MS)
      .describe(
        "How long a call waits for the downstream client's answer before the relayed request is cancelled, in milliseconds.",
      ),
    maxParkedCallsPerPrincipal: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_MAX_PARKED_CALLS_PER_PRINCIPAL)
      .describe(
        "How many of one caller's calls may wait for its answers at once (each holds an upstream call open). A call beyond it is refused with OVERLOADED before it reaches the server.",
      ),
    maxParkedCalls: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_MAX_PARKED_CALLS)
      .describe('How many calls of all callers may wait for answers at once; beyond it, OVERLOADED.'),
    routeUnattributed: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Servers whose requests that name no call (a 2025-era server's elicitation or sampling over stdio) go to the one caller with a call in flight to them. Unsafe for a server that may ask after its call ended: the question would reach another caller. Others' such requests are declined.",
      ),
  })
  .describe(
    'Elicitation and sampling requests of upstream servers, relayed to the caller whose call made them.',
  );

/** Options of {@link ServerRequestRelay}; every field has a default. */
export type ServerRequestRelayOptions = z.input<typeof ServerRequestRelayOptionsSchema>;
export type ServerRequestRelayConfig = z.output<typeof ServerRequestRelayOptionsSchema>;
