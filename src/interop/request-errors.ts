/**
 * Maps what the SDK throws for a request into our coded errors, by the kind `sdk-errors.ts` classifies it as: a
 * JSON-RPC error from the server stays a distinct `ServerRequestError`; timeouts, cancellation and lost
 * connections get their own codes.
 */
import {
  AuthorizationServerMismatchError,
  IssuerMismatchError,
  type ProtocolError,
  type SdkError,
} from '@modelcontextprotocol/client';
import {
  AuthError,
  ConnectionLostError,
  InterlockError,
  RequestCancelledError,
  RequestTimeoutError,
  ServerRequestError,
} from '../errors.js';
import type { SecretRedactor } from '../redact.js';
import { classifySdkError } from './sdk-errors.js';

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
 * Turns anything a request threw into an {@link InterlockError} that says what happened, with every secret the
 * redactor knows masked out of its message and causes.
 */
export function mapRequestError(err: unknown, ctx: RequestErrorContext): InterlockError {
  const mapped = mapError(err, ctx);
  return ctx.redactor === undefined ? mapped : ctx.redactor.maskError(mapped);
}

function mapError(err: unknown, ctx: RequestErrorContext): InterlockError {
  if (err instanceof InterlockError) return err;
  const { server, what } = ctx;
  const failure = classifySdkError(err, ctx.signal);
  if (failure.kind === 'cancelled') {
    return new RequestCancelledError(`Call to ${what} on server '${server}' was cancelled.`, {
      server,
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  switch (failure.kind) {
    case 'timeout':
      return new RequestTimeoutError(
        `Call to ${what} on server '${server}' timed out after ${ctx.timeoutMs ?? '?'} ms; raise timeoutMs if it needs longer.`,
        ctx.timeoutMs ?? 0,
        { server, cause: err },
      );
    case 'session_gone':
      return new ConnectionLostError(
        `Server '${server}' no longer knows this client's session (HTTP 404) and did not process the call to ${what}; Interlock reconnects with a new session, call again.`,
        { server, cause: err },
      );
    case 'not_connected':
    case 'connect_refused':
    case 'connection_lost':
    case 'stream_lost':
      return new ConnectionLostError(
        `Connection to server '${server}' was lost during the call to ${what}.`,
        {
          server,
          cause: err,
        },
      );
    case 'overloaded':
    case 'auth_required':
    case 'forbidden':
    case 'http_error':
      if (failure.status !== undefined) {
        return new ServerRequestError(
          `Server '${server}' answered the call to ${what} with HTTP ${failure.status}${HTTP_ADVICE[failure.kind]}: ${message}`,
          -1,
          { httpStatus: failure.status },
          { server, cause: err },
        );
      }
      break;
    case 'input_rounds_exceeded': {
      const { code, data } = err as SdkError;
      const rounds = (data as { rounds?: number } | undefined)?.rounds;
      return new ServerRequestError(
        `Server '${server}' still asked for input after ${rounds ?? 'the maximum number of'} rounds of the call to ${what}; Interlock stopped the call (a server that never completes it is at fault).`,
        -1,
        { sdkCode: code, rounds },
        { server, cause: err },
      );
    }
    case 'server_error': {
      const { code, data } = err as ProtocolError;
      return new ServerRequestError(
        `Server '${server}' answered the call to ${what} with an error: ${message}`,
        code,
        data,
        { server, cause: err },
      );
    }
    case 'unusable_answer': {
      // A local protocol failure (e.g. an invalid result): the server's answer was unusable.
      const { code, data } = err as SdkError;
      return new ServerRequestError(
        `Server '${server}' gave an unusable answer to the call to ${what} (${code}): ${message}`,
        -1,
        { sdkCode: code, data },
        { server, cause: err },
      );
    }
    case 'unknown':
      break;
  }
  // A sign-in the transport could not do, or an error nothing above recognizes: the call failed below MCP.
  return new ConnectionLostError(
    `The call to ${what} on server '${server}' failed in transport: ${message}`,
    {
      server,
      cause: err,
    },
  );
}

/** What to do about an HTTP error status, said right after `HTTP {status}`. */
const HTTP_ADVICE: Readonly<Record<'overloaded' | 'auth_required' | 'forbidden' | 'http_error', string>> = {
  overloaded: ' (the server is overloaded or limits this client; call again later)',
  auth_required:
    " (the server wants credentials: check the server's auth or headers config, or sign in again)",
  forbidden: ' (the credentials lack a permission the server wants: check the granted scopes)',
  http_error: '',
};

/**
 * The SDK's issuer checks as `AUTH_FAILED` (issue 13): the authorization response's `iss` (RFC 9207), the metadata
 * `issuer` echo (RFC 8414 3.3) and the binding of credentials to one authorization server (SEP-2352). Undefined for
 * any other error. The `iss` a callback carried is attacker-controlled in a mix-up and stays out of the message.
 */
export function authFailureOf(err: unknown, server: string): AuthError | undefined {
  if (err instanceof AuthError) return err;
  if (err instanceof IssuerMismatchError) {
    if (err.kind === 'authorization_response') {
      return new AuthError(
        'issuer_mismatch',
        `Sign-in to server '${server}' was refused: the authorization response did not come from the expected authorization server ${err.expected ?? '(unknown)'} (RFC 9207 iss check; possible mix-up attack). The code was not redeemed; start the sign-in again, and if it repeats, report it to the server's operator.`,
        { cause: err, server },
      );
    }
    return new AuthError(
      'metadata_issuer_mismatch',
      `The authorization server of server '${server}' is misconfigured: its metadata names the issuer ${JSON.stringify(err.received)} but it was discovered at ${JSON.stringify(err.expected)} (RFC 8414 3.3). Nothing was sent to it; report this to the server's operator.`,
      { cause: err, server },
    );
  }
  if (err instanceof AuthorizationServerMismatchError) {
    return new AuthError(
      'authorization_server_changed',
      `Server '${server}' now names another authorization server than the one its credentials are bound to; they were not sent to it. Run 'interlock logout ${server}' and sign in again, after checking with the operator that the change is genuine.`,
      { cause: err, server },
    );
  }
  return undefined;
}
