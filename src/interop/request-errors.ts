/**
 * Maps what the SDK throws for a request into our coded errors: a JSON-RPC error from the server stays a
 * distinct `ServerRequestError`; timeouts, cancellation and lost connections get their own codes.
 */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import {
  ConnectionLostError,
  InteropError,
  RequestCancelledError,
  RequestTimeoutError,
  ServerRequestError,
} from '../errors.js';
import type { SecretRedactor } from '../redact.js';

/** What the request was, for the message. */
export interface RequestErrorContext {
  server: string;
  /** e.g. `tool 'mcp__fs__read_file'`. */
  what: string;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
  /** Masks secrets the server may have echoed (its message, and the SDK error it carries as cause). */
  redactor?: SecretRedactor | undefined;
}

/**
 * Turns anything a request threw into an {@link InteropError} that says what happened, with every secret the
 * redactor knows masked out of its message and causes.
 */
export function mapRequestError(err: unknown, ctx: RequestErrorContext): InteropError {
  const mapped = mapError(err, ctx);
  return ctx.redactor === undefined ? mapped : ctx.redactor.maskError(mapped);
}

function mapError(err: unknown, ctx: RequestErrorContext): InteropError {
  if (err instanceof InteropError) return err;
  const { server, what } = ctx;
  if (ctx.signal?.aborted) {
    return new RequestCancelledError(`Call to ${what} on server '${server}' was cancelled.`, {
      server,
      cause: err,
    });
  }
  if (err instanceof SdkHttpError) {
    return new ServerRequestError(
      `Server '${server}' answered the call to ${what} with HTTP ${err.status}: ${err.message}`,
      -1,
      { httpStatus: err.status },
      { server, cause: err },
    );
  }
  if (err instanceof SdkError) {
    if (err.code === SdkErrorCode.RequestTimeout) {
      return new RequestTimeoutError(
        `Call to ${what} on server '${server}' timed out after ${ctx.timeoutMs ?? '?'} ms; raise timeoutMs if it needs longer.`,
        ctx.timeoutMs ?? 0,
        { server, cause: err },
      );
    }
    if (
      err.code === SdkErrorCode.ConnectionClosed ||
      err.code === SdkErrorCode.SendFailed ||
      err.code === SdkErrorCode.NotConnected
    ) {
      return new ConnectionLostError(
        `Connection to server '${server}' was lost during the call to ${what}.`,
        {
          server,
          cause: err,
        },
      );
    }
    if (err.code === SdkErrorCode.InputRequiredRoundsExceeded) {
      const rounds = (err.data as { rounds?: number } | undefined)?.rounds;
      return new ServerRequestError(
        `Server '${server}' still asked for input after ${rounds ?? 'the maximum number of'} rounds of the call to ${what}; Interlock stopped the call (a server that never completes it is at fault).`,
        -1,
        { sdkCode: err.code, rounds },
        { server, cause: err },
      );
    }
    // A local protocol failure (e.g. an invalid result): the server's answer was unusable.
    return new ServerRequestError(
      `Server '${server}' gave an unusable answer to the call to ${what} (${err.code}): ${err.message}`,
      -1,
      { sdkCode: err.code, data: err.data },
      { server, cause: err },
    );
  }
  if (err instanceof ProtocolError) {
    return new ServerRequestError(
      `Server '${server}' answered the call to ${what} with an error: ${err.message}`,
      err.code,
      err.data,
      { server, cause: err },
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ConnectionLostError(
    `The call to ${what} on server '${server}' failed in transport: ${message}`,
    {
      server,
      cause: err,
    },
  );
}

/** The HTTP status an SDK transport error carries, if any. */
export function httpStatusOf(err: unknown): number | undefined {
  return err instanceof SdkHttpError ? err.status : undefined;
}
