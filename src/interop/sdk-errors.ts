/**
 * What the MCP SDK client, its transports and undici throw, classified once (issue 15). Every other module asks
 * this one what a failure was (the session is gone, the request never left, the connection dropped, …) instead
 * of reading message text. Classification goes by the SDK's error classes and codes (`SdkError.code`,
 * `ProtocolError`), the HTTP status an `SdkHttpError` carries, and the system `code` undici puts in a cause
 * chain. A message is read only where the SDK gives nothing else; each such pattern below is named, says which
 * SDK code path produces it, and is tied to the SDK version it was written against.
 */
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SseError,
  UnauthorizedError,
} from '@modelcontextprotocol/client';

/** What kind of failure an error from the SDK or a transport is. */
export type SdkFailureKind =
  /** The request was cancelled through its `AbortSignal` (an `AbortError`). */
  | 'cancelled'
  /** The SDK's request timeout fired (`SdkErrorCode.RequestTimeout`). */
  | 'timeout'
  /** HTTP 404 for our session (Streamable HTTP or SSE): it expired or the server restarted; not processed. */
  | 'session_gone'
  /** The transport refused to send: there was no live connection. The request never left. */
  | 'not_connected'
  /** The TCP connection was refused (`ECONNREFUSED`): the request never reached the server. */
  | 'connect_refused'
  /** The connection closed or broke while the request was in flight; the server may have processed it. */
  | 'connection_lost'
  /** A Streamable HTTP / SSE stream broke and could not be resumed; the transport gave up on it. */
  | 'stream_lost'
  /** The server answered HTTP 429 or 503: it is overloaded or rate-limits us. */
  | 'overloaded'
  /** The server answered HTTP 401, or the SDK needs a sign-in (`UnauthorizedError`). */
  | 'auth_required'
  /** The server answered HTTP 403. */
  | 'forbidden'
  /** The server answered another HTTP error status. */
  | 'http_error'
  /** The server answered with a JSON-RPC error (`ProtocolError`): the server's own answer, not a local fault. */
  | 'server_error'
  /** The server kept asking for input past the SDK's round cap (`SdkErrorCode.InputRequiredRoundsExceeded`). */
  | 'input_rounds_exceeded'
  /** The SDK could not use the server's answer (an invalid result, an unexpected content type, …). */
  | 'unusable_answer'
  /** Anything else: a bug, or an error the SDK wraps in nothing we recognize. */
  | 'unknown';

/** A classified failure. */
export interface SdkFailure {
  readonly kind: SdkFailureKind;
  /** The HTTP status the server answered, when there was one. */
  readonly status?: number | undefined;
  /** The first system error code in the cause chain (`ECONNREFUSED`, `ECONNRESET`, `ENOENT`, …), if any. */
  readonly systemCode?: string | undefined;
}

/**
 * SDK 2.4 `SSEClientTransport.send`: a POST the server refused is a plain `Error` whose only record of the
 * status is its message, `Error POSTing to endpoint (HTTP 404): …` (the Streamable HTTP transport throws an
 * `SdkHttpError` with `status` instead).
 */
const SSE_POST_STATUS = /^Error POSTing to endpoint \(HTTP (\d{3})\)/;

/**
 * SDK 2.4 `Protocol._requestWithSchemaViaCodec`: a request made while no transport is attached rejects with a
 * plain `Error('Not connected')` (every other path uses `SdkError` with `SdkErrorCode.NotConnected`).
 */
const PROTOCOL_NOT_CONNECTED = /^Not connected$/;

/**
 * SDK 2.4 `StreamableHTTPClientTransport` reports a broken stream to `onerror` as plain `Error`s:
 * `_scheduleReconnection` gives `Maximum reconnection attempts (n) exceeded.` and `Failed to reconnect SSE
 * stream: …`, `_handleSseStream` gives `SSE stream disconnected: …` and `Failed to reconnect: …`.
 */
const STREAM_LOST =
  /^(?:Maximum reconnection attempts \(\d+\) exceeded|Failed to reconnect\b|SSE stream disconnected:)/;

/**
 * SDK 2.4 version negotiation (`SdkErrorCode.EraNegotiationFailed`) has one code for every way the
 * `server/discover` probe fails; only the message tells that the transport closed during it
 * (`… the transport was closed during the server/discover probe`, `… the connection closed during the
 * server/discover probe …`).
 */
const PROBE_CLOSED = /closed during the server\/discover probe/;

/** A Node or undici system error code: `ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`, `UND_ERR_SOCKET`. */
const SYSTEM_CODE = /^(?:E[A-Z]+|ERR_[A-Z0-9_]+|UND_ERR_[A-Z_]+)$/;

/** Deepest cause chain we walk (undici nests the system error two levels down; cycles stop here too). */
const MAX_CAUSE_DEPTH = 8;

/**
 * The first system error code (`ECONNREFUSED`, `UND_ERR_SOCKET`, …) in `err` or its causes, or in the errors of
 * an `AggregateError` (undici reports a refused dual-stack connect as one, code on the aggregate).
 */
export function systemCodeOf(err: unknown): string | undefined {
  let e = err;
  for (let depth = 0; e !== null && typeof e === 'object' && depth < MAX_CAUSE_DEPTH; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SYSTEM_CODE.test(code)) return code;
    if (e instanceof AggregateError) {
      for (const inner of e.errors) {
        const found = systemCodeOf(inner);
        if (found !== undefined) return found;
      }
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The HTTP status the server answered with, when the error carries one (Streamable HTTP or SSE). */
export function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof SdkHttpError) return err.status;
  if (err instanceof Error && !(err instanceof SdkError)) {
    const m = SSE_POST_STATUS.exec(err.message);
    if (m !== null) return Number(m[1]);
  }
  return undefined;
}

function byStatus(status: number): SdkFailureKind {
  if (status === 404) return 'session_gone';
  if (status === 401) return 'auth_required';
  if (status === 403) return 'forbidden';
  if (status === 429 || status === 503) return 'overloaded';
  return 'http_error';
}

/**
 * SDK 2.4 `Protocol` rejects an aborted request with `RequestTimeout` too (`new SdkError(RequestTimeout,
 * String(signal.reason))`, no data); only its own timers attach `data.timeout` (`Request timed out`) or
 * `data.maxTotalTimeout` (`Maximum total timeout exceeded`).
 */
function sdkTimerFired(err: SdkError): boolean {
  const data = err.data as { timeout?: unknown; maxTotalTimeout?: unknown } | undefined;
  return typeof data?.timeout === 'number' || typeof data?.maxTotalTimeout === 'number';
}

function bySdkError(err: SdkError): SdkFailureKind {
  switch (err.code) {
    case SdkErrorCode.RequestTimeout:
      return sdkTimerFired(err) ? 'timeout' : 'cancelled';
    case SdkErrorCode.NotConnected:
      return 'not_connected';
    case SdkErrorCode.ConnectionClosed:
    case SdkErrorCode.SendFailed:
      return 'connection_lost';
    case SdkErrorCode.InputRequiredRoundsExceeded:
      return 'input_rounds_exceeded';
    case SdkErrorCode.ClientHttpAuthentication:
      return 'auth_required';
    case SdkErrorCode.ClientHttpForbidden:
      return 'forbidden';
    default:
      return 'unusable_answer';
  }
}

/**
 * Classifies anything the SDK client, a transport or `fetch` threw (or reported to `onerror`). Pass the request's
 * `signal` when there is one: a request its caller aborted is `cancelled` whatever the SDK rejected it with.
 */
export function classifySdkError(err: unknown, signal?: AbortSignal): SdkFailure {
  if (signal?.aborted === true) return { kind: 'cancelled' };
  const systemCode = systemCodeOf(err);
  const status = httpStatusOf(err);
  if (status !== undefined) return { kind: byStatus(status), status, systemCode };
  if (err instanceof SdkError) return { kind: bySdkError(err), systemCode };
  if (err instanceof ProtocolError) return { kind: 'server_error' };
  // The SDK's EventSource failed (SSE transport): the stream is gone. Its `code` is the HTTP status, if any.
  if (err instanceof SseError) {
    const code = typeof err.code === 'number' ? err.code : undefined;
    if (code === 404) return { kind: 'session_gone', status: code, systemCode };
    return { kind: 'stream_lost', status: code, systemCode };
  }
  if (!(err instanceof Error)) return { kind: 'unknown' };
  // The SDK's `UnauthorizedError` has no code and no status: the transport needs a sign-in it cannot do by itself.
  if (err instanceof UnauthorizedError) return { kind: 'auth_required', systemCode };
  // A signal's default reason (a DOMException) when something rejects with it directly.
  if (err.name === 'AbortError') return { kind: 'cancelled', systemCode };
  if (systemCode === 'ECONNREFUSED') return { kind: 'connect_refused', systemCode };
  if (PROTOCOL_NOT_CONNECTED.test(err.message)) return { kind: 'not_connected' };
  if (STREAM_LOST.test(err.message)) return { kind: 'stream_lost', systemCode };
  // A network failure below the SDK (undici's `fetch failed`, a reset socket, a broken pipe).
  if (systemCode !== undefined) return { kind: 'connection_lost', systemCode };
  return { kind: 'unknown' };
}

/** Streamable HTTP / SSE answered 404 for our session: it expired; a new `initialize` is needed. */
export function sessionGone(err: unknown): boolean {
  return classifySdkError(err).kind === 'session_gone';
}

/**
 * True only when the request provably never reached the server: the transport refused to send it, the TCP
 * connection was refused, or the server rejected the session before reading the request. Only then may a call
 * that is not idempotent be sent again.
 */
export function neverReachedServer(err: unknown): boolean {
  const { kind } = classifySdkError(err);
  return kind === 'session_gone' || kind === 'not_connected' || kind === 'connect_refused';
}

/** JSON-RPC error code of a request whose `Mcp-Param-*` headers do not match its arguments (SEP-2243). */
const HEADER_MISMATCH_CODE = -32020;

/**
 * The server refused a request because the headers mirrored from the tool's definition do not match the ones its
 * own definition declares (SEP-2243 `HEADER_MISMATCH`): it was rejected before the tool ran.
 */
export function isHeaderMismatch(err: unknown): boolean {
  return err instanceof ProtocolError && err.code === HEADER_MISMATCH_CODE;
}

/**
 * The connection itself failed (as opposed to the server answering with an error): `mapped` is what the raw
 * error became for the caller (`CONNECTION_LOST`), or the server said our session is gone.
 */
export function isConnectionFailure(raw: unknown, mapped: { readonly code: string }): boolean {
  return mapped.code === 'CONNECTION_LOST' || sessionGone(raw);
}

/**
 * An error an HTTP transport reported outside any request that means the connection is gone: our session got a
 * 404, or a stream broke and the transport gave up resuming it. A new `initialize` is needed.
 */
export function isFatalStreamError(err: unknown): boolean {
  const { kind } = classifySdkError(err);
  return kind === 'session_gone' || kind === 'stream_lost';
}

/**
 * The era probe failed because the transport closed during it: stdio servers built on SDKs that exit on any
 * request before `initialize` do this (they are 2025-era servers). `err` may carry the SDK error as its cause.
 */
export function probeClosedTransport(err: unknown): boolean {
  const sdk = err instanceof SdkError ? err : err instanceof Error ? err.cause : undefined;
  return (
    sdk instanceof SdkError &&
    sdk.code === SdkErrorCode.EraNegotiationFailed &&
    PROBE_CLOSED.test(sdk.message)
  );
}
