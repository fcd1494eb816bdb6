/**
 * Options of the gateway's flow states (issue 42), one zod schema that is also the project file's `gateway.flow`
 * section: how many callers' states the gateway holds at once, how long an idle one is kept, and how much recorded
 * text each indexes for argument provenance.
 */
import { z } from 'zod';

/** How many flow states (one per caller or session) a gateway holds at once. */
export const DEFAULT_MAX_FLOW_STATES = 1_024;
/** How long a caller's flow state is kept after its last request. */
export const DEFAULT_FLOW_IDLE_TIMEOUT_MS = 30 * 60_000;
/** How many characters of recorded text one caller's state indexes (a gateway holds many states). */
export const DEFAULT_GATEWAY_FLOW_INDEXED_CHARS = 256 * 1024;

export const GatewayFlowOptionsSchema = z
  .strictObject({
    maxStates: z
      .number()
      .int()
      .positive()
      .max(1_000_000)
      .default(DEFAULT_MAX_FLOW_STATES)
      .describe(
        "How many flow states the gateway holds at once (one per downstream session or authenticated caller). A new caller's request beyond it is refused with OVERLOADED until a state is idle long enough to go: a held state is never forgotten to make room.",
      ),
    idleTimeoutMs: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 60 * 60_000)
      .default(DEFAULT_FLOW_IDLE_TIMEOUT_MS)
      .describe(
        "How long a caller's flow state is kept after its last request, in milliseconds; then it is dropped and the caller's next request starts with no labels.",
      ),
    maxIndexedChars: z
      .number()
      .int()
      .min(0)
      .max(64 * 1024 * 1024)
      .default(DEFAULT_GATEWAY_FLOW_INDEXED_CHARS)
      .describe(
        'How many characters of recorded text each state indexes for argument provenance (`carries`). Past it the oldest fingerprints go and a `carries` condition fails closed for that caller; labels are kept whatever the size.',
      ),
  })
  .describe(
    "Information flow per caller: the labels of what entered each downstream session (stdio) or each authenticated caller's requests (HTTP), which flow rules decide on.",
  );

export type GatewayFlowOptions = z.input<typeof GatewayFlowOptionsSchema>;
export type GatewayFlowConfig = z.output<typeof GatewayFlowOptionsSchema>;
