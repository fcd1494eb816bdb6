/**
 * A 2026-07-28 upstream's input round, handed to the caller instead of held (issue 41): the upstream keeps no
 * state between rounds (its own `requestState` carries it), so the gateway need not either. What the caller must
 * answer goes to it under keys of the gateway's; the rest (the upstream's state, the keys' mapping, the answers
 * made here) travels sealed in the state the caller echoes, and whichever replica gets the caller's answers
 * continues the call. Nothing is parked, nothing is routed.
 */
import type { InputRequest } from '@modelcontextprotocol/server';
import { MAX_INPUT_ROUNDS } from '../protocol/bounds.js';
import type { HandedOffRound, InputRoundControl } from '../protocol/input-rounds.js';

/** What the sealed state of a handed-off round holds besides its binding. */
export interface SealedUpstream {
  /** The upstream server the call went to. */
  server: string;
  /** The upstream's own `requestState`, as it gave it. */
  state?: string | undefined;
  /** The gateway's key of each question the caller was asked → the upstream's key. */
  keys: Record<string, string>;
  /** Answers the gateway made itself (a refusal), sent with the continuation. */
  answered: Record<string, unknown>;
  /** Which input round of the call this is. */
  round: number;
  /** Milliseconds since the epoch after which the caller's answers are refused (the relay's inputTimeoutMs). */
  expires: number;
}

/** The questions for the caller, under the gateway's keys, and what the sealed state keeps of the round. */
export function handOff(
  server: string,
  round: HandedOffRound,
  timeoutMs: number,
): { inputRequests: Record<string, InputRequest>; upstream: SealedUpstream } {
  const inputRequests: Record<string, InputRequest> = {};
  const keys: Record<string, string> = {};
  let next = 0;
  for (const [key, request] of Object.entries(round.deferred)) {
    const mine = `u${++next}`;
    keys[mine] = key;
    inputRequests[mine] = request as InputRequest;
  }
  return {
    inputRequests,
    upstream: {
      server,
      ...(round.requestState !== undefined && { state: round.requestState }),
      keys,
      answered: round.answered,
      round: round.round,
      expires: Date.now() + timeoutMs,
    },
  };
}

/**
 * The continuation of a sealed round: the caller's answers under the upstream's keys (answers to anything it
 * was not asked are dropped) with the gateway's own, and the upstream's state. Undefined when the round may not
 * be continued: another server, expired, or past the bound on rounds.
 */
export function continuation(
  upstream: SealedUpstream,
  server: string,
  responses: Record<string, unknown> | undefined,
): InputRoundControl['resume'] {
  if (upstream.server !== server || Date.now() > upstream.expires || upstream.round > MAX_INPUT_ROUNDS) {
    return undefined;
  }
  const inputResponses: Record<string, unknown> = { ...upstream.answered };
  for (const [mine, value] of Object.entries(responses ?? {})) {
    const theirs = Object.hasOwn(upstream.keys, mine) ? upstream.keys[mine] : undefined;
    if (theirs !== undefined) inputResponses[theirs] = value;
  }
  return { requestState: upstream.state, inputResponses, round: upstream.round };
}
