/**
 * Multi-round-trip requests (MCP 2026-07-28), driven by the call path instead of the SDK's own driver: when a
 * server answers `tools/call` with `input_required`, each of its input requests is answered by the same gated
 * handlers as any server request, and the call is sent again with the answers and the server's `requestState`.
 *
 * Why not the SDK's driver: it runs the handlers from the connection's message loop, outside the async context
 * of the call that is waiting, so nothing in a handler can tell which call asked. Here the answers run inside
 * the call, so whoever made the call (a gateway's downstream client, say) is known to the handler.
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type CallToolRequest,
  type Client,
  isInputRequiredResult,
  ProtocolErrorCode,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
} from '@modelcontextprotocol/client';
import { RequestCancelledError } from '../errors.js';
import { MAX_INPUT_ROUNDS, MAX_REQUEST_STATE_CHARS } from './bounds.js';
import type { InboundStage } from './inbound.js';

/** Answers one input request the way a server request is answered: gated, traced, audited. */
export type InputAnswerer = (
  server: string,
  method: string,
  params: unknown,
  signal: AbortSignal,
) => Promise<unknown>;

/**
 * How a call's input rounds go when this process should not wait for their answers (issue 41, a gateway whose
 * replicas share no memory): a round whose requests go to the caller is handed back, and a later call continues it.
 */
export interface InputRoundControl {
  /** A continuation: the first `tools/call` carries these answers and the server's own `requestState`. */
  resume?:
    | { requestState?: string | undefined; inputResponses: Record<string, unknown>; round: number }
    | undefined;
  /** Takes a round some of whose requests wait for someone else; the call then ends with a {@link HandedOff}. */
  handOff?: ((round: HandedOffRound) => void) | undefined;
}

/** An upstream input round handed back: what was answered here, what waits, and the server's state. */
export interface HandedOffRound {
  /** Which round of the call this is (1 for the first `input_required`). */
  round: number;
  requestState: string | undefined;
  /** Answers made here (a refusal, say), sent with the continuation. */
  answered: Record<string, unknown>;
  /** The requests that wait (what was passed to {@link deferInput}), by the server's keys. */
  deferred: Record<string, unknown>;
}

/** What a call whose round was handed off ends with: no result (the continuation brings it), and which round it was. */
export class HandedOff {
  constructor(readonly round: number) {}
}

const deferScope = new AsyncLocalStorage<(request: unknown) => Promise<never>>();

/**
 * Inside an answer to an input request of a round that may be handed off: marks the request as waiting for
 * someone else (after its decisions passed) and returns a promise that rejects once the round is handed off;
 * elsewhere undefined (answer it as usual).
 */
export function deferInput(request: unknown): Promise<never> | undefined {
  return deferScope.getStore()?.(request);
}

/**
 * `client.callTool`, with any `input_required` rounds answered by `answer` (on a 2026-07-28 connection; a 2025
 * one has no such rounds and is called as is). Stops after {@link MAX_INPUT_ROUNDS} rounds with the SDK's own
 * error, so it is reported as the SDK's driver would be.
 */
export async function callToolAnswering(
  client: Client,
  params: CallToolRequest['params'],
  options: RequestOptions,
  input: {
    server: string;
    answer: InputAnswerer;
    signal?: AbortSignal | undefined;
    control?: InputRoundControl | undefined;
  },
): Promise<unknown> {
  if (client.getProtocolEra() !== 'modern') return client.callTool(params, options);
  const manual = { ...options, allowInputRequired: true };
  const resume = input.control?.resume;
  let result: unknown = await client.callTool(
    resume === undefined ? params : continued(params, resume.inputResponses, resume.requestState),
    manual,
  );
  for (let round = (resume?.round ?? 0) + 1; isInputRequiredResult(result); round++) {
    if (round > MAX_INPUT_ROUNDS) {
      throw new SdkError(
        SdkErrorCode.InputRequiredRoundsExceeded,
        `Multi-round-trip request 'tools/call' still required input after ${MAX_INPUT_ROUNDS} rounds`,
        { rounds: MAX_INPUT_ROUNDS },
      );
    }
    const { inputRequests, requestState } = result as {
      inputRequests?: Record<string, { method?: unknown; params?: unknown }>;
      requestState?: string;
    };
    const handOff = input.control?.handOff;
    if (handOff !== undefined) {
      const split = await answerOrDefer(inputRequests ?? {}, input);
      if (Object.keys(split.deferred).length > 0) {
        handOff({ round, requestState, ...split });
        return new HandedOff(round);
      }
      result = await client.callTool(continued(params, split.answered, requestState), manual);
      continue;
    }
    const responses = await answerRound(inputRequests ?? {}, input);
    result = await client.callTool(continued(params, responses, requestState), manual);
  }
  return result;
}

/** The `tools/call` that continues a call with a round's answers and the server's state. */
function continued(
  params: CallToolRequest['params'],
  responses: Record<string, unknown>,
  requestState: string | undefined,
): CallToolRequest['params'] {
  return {
    ...params,
    ...(Object.keys(responses).length > 0 && { inputResponses: responses }),
    ...(requestState !== undefined && { requestState }),
  } as CallToolRequest['params'];
}

/**
 * Answers a round's requests side by side, except those an answerer defers ({@link deferInput}): each request
 * ends answered or deferred; the first failure fails the call. Deferred answers are abandoned once all are known.
 */
async function answerOrDefer(
  requests: Record<string, { method?: unknown; params?: unknown }>,
  input: { server: string; answer: InputAnswerer; signal?: AbortSignal | undefined },
): Promise<{ answered: Record<string, unknown>; deferred: Record<string, unknown> }> {
  const round = new AbortController();
  const onAbort = () => round.abort(input.signal?.reason);
  if (input.signal?.aborted) onAbort();
  input.signal?.addEventListener('abort', onAbort, { once: true });
  const answered: Record<string, unknown> = {};
  const deferred: Record<string, unknown> = {};
  const handedOff = new Promise<never>((_, reject) =>
    round.signal.addEventListener('abort', () => reject(round.signal.reason), { once: true }),
  );
  handedOff.catch(() => undefined);
  try {
    await Promise.all(
      Object.entries(requests).map(
        ([key, request]) =>
          new Promise<void>((resolve, reject) => {
            const defer = (asked: unknown) => {
              deferred[key] = asked;
              resolve();
              return handedOff;
            };
            const method = typeof request?.method === 'string' ? request.method : '';
            deferScope
              .run(defer, () => input.answer(input.server, method, request?.params, round.signal))
              .then(
                (value) => {
                  if (!(key in deferred)) answered[key] = value;
                  resolve();
                },
                (err: unknown) => {
                  if (key in deferred) return;
                  round.abort(err);
                  reject(err);
                },
              );
          }),
      ),
    );
    return { answered, deferred };
  } finally {
    input.signal?.removeEventListener('abort', onAbort);
    // The deferred answers wait no longer: they are the caller's now.
    round.abort(new RequestCancelledError('The input round was handed to the caller.'));
  }
}

/** Answers one round's requests side by side; the first failure cancels the others and fails the call. */
async function answerRound(
  requests: Record<string, { method?: unknown; params?: unknown }>,
  input: { server: string; answer: InputAnswerer; signal?: AbortSignal | undefined },
): Promise<Record<string, unknown>> {
  const round = new AbortController();
  const onAbort = () => round.abort(input.signal?.reason);
  if (input.signal?.aborted) onAbort();
  input.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const answers = await Promise.all(
      Object.entries(requests).map(async ([key, request]) => {
        try {
          const method = typeof request?.method === 'string' ? request.method : '';
          return [key, await input.answer(input.server, method, request?.params, round.signal)] as const;
        } catch (err) {
          round.abort(err);
          throw err;
        }
      }),
    );
    return Object.fromEntries(answers);
  } finally {
    input.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Stops an `input_required` answer before the SDK (or the call path) acts on it when its opaque `requestState` is
 * larger than {@link MAX_REQUEST_STATE_CHARS} (it would be echoed back round after round), or when it carries more
 * than `maxRequests` input requests (each one asks a person or a model: issue 38). The response becomes a
 * JSON-RPC error that says why, so no handler is asked. A stage of the inbound chain (inbound.ts), after task
 * handles and before the answers to direct calls and the SDK's dispatch.
 */
export function boundInputRounds(maxRequests: number): InboundStage {
  return {
    name: 'input-bounds',
    handle(message, extra, next) {
      const result = (
        message as { result?: { resultType?: unknown; requestState?: unknown; inputRequests?: unknown } }
      ).result;
      const refused = result?.resultType === 'input_required' ? refusedRound(result, maxRequests) : undefined;
      if (refused === undefined) {
        next(message, extra);
        return;
      }
      const id = (message as { id: string | number }).id;
      next({ jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InternalError, message: refused } }, extra);
    },
  };
}

/** Why an `input_required` result is refused, or undefined. */
function refusedRound(
  result: { requestState?: unknown; inputRequests?: unknown },
  maxRequests: number,
): string | undefined {
  const state = result.requestState;
  if (typeof state === 'string' && state.length > MAX_REQUEST_STATE_CHARS) {
    return `its input_required answer carried a requestState of ${state.length} characters, over Interlock's limit of ${MAX_REQUEST_STATE_CHARS}; it was not sent back and the call is stopped`;
  }
  const requests = result.inputRequests;
  if (typeof requests !== 'object' || requests === null) return undefined;
  let count = 0;
  for (const _ in requests) {
    if (++count > maxRequests) {
      const total = Object.keys(requests).length;
      return `its input_required answer carried ${total} input requests in one round, over Interlock's limit of ${maxRequests} per round; none was answered and the call is stopped`;
    }
  }
  return undefined;
}
