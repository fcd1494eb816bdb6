/**
 * Bounds of the connection layer that `mcp-interlock/interop` exports, kept apart from the code that enforces
 * them so that importing the entry point does not load that code (issue 15, import time).
 */

/** How many stderr lines a connection keeps. */
export const STDERR_LINES_KEPT = 50;

/** Rounds of `input_required` one request may take before it fails (MCP 2026-07-28 MRTR). */
export const MAX_INPUT_ROUNDS = 10;

/**
 * The most input requests (elicitations, sampling, roots) one `input_required` round may carry (MCP 2026-07-28
 * MRTR): a round with more is refused whole, before any handler is asked (issue 38). A manager's
 * `maxInputRequestsPerRound` changes it.
 */
export const MAX_INPUT_REQUESTS_PER_ROUND = 16;

/** The longest `requestState` echoed back to a server (MCP 2026-07-28 MRTR); a longer one fails the call. */
export const MAX_REQUEST_STATE_CHARS = 1024 * 1024;
