/**
 * Multi-round-trip requests (MCP 2026-07-28), driven by the call path instead of the SDK's own driver: when a
 * server answers `tools/call` with `input_required`, each of its input requests is answered by the same gated
 * handlers as any server request, and the call is sent again with the answers and the server's `requestState`.
 *
 * Why not the SDK's driver: it runs the handlers from the connection's message loop, outside the async context
 * of the call that is waiting, so nothing in a handler can tell which call asked. Here the answers run inside
 * the call, so whoever made the call (a gateway's downstream client, say) is known to the handler.
 */
import {
  type CallToolRequest,
  type Client,
  isInputRequiredResult,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
} from '@modelcontextprotocol/client';
import { MAX_INPUT_ROUNDS } from './bounds.js';

/** Answers one input request the way a server request is answered: gated, traced, audited. */
export type InputAnswerer = (
  server: string,
  method: string,
  params: unknown,
  signal: AbortSignal,
) => Promise<unknown>;

/**
 * `client.callTool`, with any `input_required` rounds answered by `answer` (on a 2026-07-28 connection; a 2025
 * one has no such rounds and is called as is). Stops after {@link MAX_INPUT_ROUNDS} rounds with the SDK's own
 * error, so it is reported as the SDK's driver would be.
 */
export async function callToolAnswering(
  client: Client,
  params: CallToolRequest['params'],
  options: RequestOptions,
  input: { server: string; answer: InputAnswerer; signal?: AbortSignal | undefined },
): Promise<unknown> {
  if (client.getProtocolEra() !== 'modern') return client.callTool(params, options);
  const manual = { ...options, allowInputRequired: true };
  let result: unknown = await client.callTool(params, manual);
  for (let round = 1; isInputRequiredResult(result); round++) {
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
    const responses = await answerRound(inputRequests ?? {}, input);
    result = await client.callTool(
      {
        ...params,
        ...(Object.keys(responses).length > 0 && { inputResponses: responses }),
        ...(requestState !== undefined && { requestState }),
      } as CallToolRequest['params'],
      manual,
    );
  }
  return result;
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
