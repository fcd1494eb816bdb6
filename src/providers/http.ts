/**
 * HTTP for model APIs: undici over one shared dispatcher (keep-alive; `HTTP_PROXY`, `HTTPS_PROXY` and
 * `NO_PROXY` honored; the default SSRF guard), JSON in and out, a timeout per attempt, retries
 * for rate limits and server errors, and coded errors that never quote the API key.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import {
  ConnectionError,
  ErrorCode,
  InterlockError,
  RequestCancelledError,
  RequestTimeoutError,
} from '../errors.js';
import { createDispatcher } from '../net/http.js';
import { DEFAULT_NETWORK_POLICY, NetworkGuard } from '../net/network.js';
import { ModelProviderError } from './errors.js';

/** Default time one model request may take (per attempt). @default 600 000 ms */
export const DEFAULT_MODEL_TIMEOUT_MS = 600_000;
/** Default retries after a 408, 409, 429, 5xx or network failure. */
export const DEFAULT_MODEL_MAX_RETRIES = 2;
/** Longest wait between retries, whatever `retry-after` says. */
export const MAX_RETRY_DELAY_MS = 60_000;

/** The subset of `fetch` providers use; pass your own to record or stub requests. */
export type ModelFetch = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<Response>;

let shared: Dispatcher | undefined;

/**
 * The dispatcher every provider uses unless given its own (an engine gives its own): keep-alive connections,
 * proxies from the environment, and the default SSRF guard, which refuses link-local addresses such as the cloud
 * metadata service. Created on first use (importing the package starts nothing); idle sockets do not keep the
 * process alive.
 */
export function sharedModelDispatcher(): Dispatcher {
  shared ??= createDispatcher(new NetworkGuard(DEFAULT_NETWORK_POLICY), { proxy: 'env', connections: 32 });
  return shared;
}

/** Closes the shared dispatcher (at shutdown); the next request creates a new one. Safe to call twice. */
export async function closeSharedModelDispatcher(): Promise<void> {
  const d = shared;
  shared = undefined;
  await d?.close().catch(() => {});
}

/** Transport options every HTTP provider accepts. */
export interface HttpProviderOptions {
  /** Per-attempt timeout. @default DEFAULT_MODEL_TIMEOUT_MS (600 000) */
  timeoutMs?: number | undefined;
  /** Retries after 408, 409, 429, 5xx and network failures, honoring `retry-after`. @default 2 */
  maxRetries?: number | undefined;
  /** Extra headers sent with every request (never logged). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** The undici dispatcher. @default sharedModelDispatcher() */
  dispatcher?: Dispatcher | undefined;
  /** A fetch to use instead of undici's (tests, custom transports); `dispatcher` is then ignored. */
  fetch?: ModelFetch | undefined;
}

/** One JSON POST. */
export interface JsonPost extends HttpProviderOptions {
  provider: string;
  /** For messages: "the OpenAI-compatible API at http://host:port". Never holds credentials. */
  describe: string;
  url: string;
  body: unknown;
  signal?: AbortSignal | undefined;
  /** Reads the API's error body: its message and type. */
  readError: (json: unknown) => { message?: string | undefined; type?: string | undefined };
}

/** The `NETWORK_DENIED` error behind a failed fetch (undici wraps connector errors in `TypeError: fetch failed`). */
function networkDenied(err: unknown): InterlockError | undefined {
  for (let e = err; e instanceof Error; e = e.cause)
    if (e instanceof InterlockError && e.code === ErrorCode.NETWORK_DENIED) return e;
  return undefined;
}

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504]);

/** POSTs `body` as JSON and resolves to the parsed JSON answer. */
export async function postJson(req: JsonPost): Promise<unknown> {
  const maxRetries = req.maxRetries ?? DEFAULT_MODEL_MAX_RETRIES;
  const timeoutMs = req.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const body = JSON.stringify(req.body);
  const headers = { 'content-type': 'application/json', accept: 'application/json', ...req.headers };
  for (let attempt = 0; ; attempt++) {
    const retriesLeft = attempt < maxRetries;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.signal === undefined ? timeout : AbortSignal.any([req.signal, timeout]);
    let status: number;
    let text: string;
    let responseHeaders: Headers;
    try {
      const res = await send(req, headers, body, signal);
      status = res.status;
      responseHeaders = res.headers;
      text = await res.text();
    } catch (err) {
      if (req.signal?.aborted) {
        throw new RequestCancelledError(`The request to ${req.describe} was cancelled.`, { cause: err });
      }
      if (timeout.aborted) {
        throw new RequestTimeoutError(
          `The request to ${req.describe} timed out after ${timeoutMs} ms; raise timeoutMs if the model needs longer.`,
          timeoutMs,
          { cause: err },
        );
      }
      // A refusal by the SSRF guard (an engine's dispatcher) is final: nothing was sent, and retrying cannot help.
      const refused = networkDenied(err);
      if (refused !== undefined) throw refused;
      if (retriesLeft) {
        await wait(backoff(attempt, undefined), req);
        continue;
      }
      const why =
        err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new ConnectionError(
        `Could not reach ${req.describe}: ${why}. Check baseURL and the network or proxy.`,
        {
          cause: err,
        },
      );
    }
    const requestId = responseHeaders.get('x-request-id') ?? responseHeaders.get('request-id') ?? undefined;
    if (status >= 200 && status < 300) {
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        throw new ModelProviderError(
          `${capitalize(req.describe)} answered HTTP ${status} with a body that is not JSON: ${snippet(text)}`,
          { provider: req.provider, status, requestId },
          { cause: err },
        );
      }
    }
    if (RETRYABLE.has(status) && retriesLeft) {
      await wait(backoff(attempt, responseHeaders), req);
      continue;
    }
    let parsed: { message?: string | undefined; type?: string | undefined } = {};
    try {
      parsed = req.readError(JSON.parse(text));
    } catch {
      parsed = { message: snippet(text) };
    }
    const message = parsed.message === undefined || parsed.message === '' ? '' : `: ${parsed.message}`;
    throw new ModelProviderError(
      `${capitalize(req.describe)} answered HTTP ${status}${message}. ${hint(status)}`,
      { provider: req.provider, status, type: parsed.type, requestId },
    );
  }
}

async function send(
  req: JsonPost,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<Response> {
  if (req.fetch !== undefined) return req.fetch(req.url, { method: 'POST', headers, body, signal });
  const dispatcher = req.dispatcher ?? sharedModelDispatcher();
  // undici's Response is the web Response Node's global fetch returns; only the type names differ.
  return (await undiciFetch(req.url, {
    method: 'POST',
    headers,
    body,
    signal,
    dispatcher,
  })) as unknown as Response;
}

function hint(status: number): string {
  if (status === 401 || status === 403) return 'Check the API key and its permissions.';
  if (status === 404) return 'Check baseURL and the model name.';
  if (status === 429) return 'The API is rate limiting; wait, or lower the request rate.';
  if (status >= 500) return 'The API failed; try again later.';
  return 'The API refused the request; the message says why.';
}

/** The delay before retry `attempt + 1`: `retry-after-ms`, `retry-after` (seconds or a date), else exponential. */
export function backoff(attempt: number, headers: Headers | undefined): number {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.min(ms, MAX_RETRY_DELAY_MS);
  const after = headers?.get('retry-after');
  if (after !== null && after !== undefined) {
    const seconds = Number(after);
    const delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - Date.now();
    if (Number.isFinite(delay)) return Math.min(Math.max(delay, 0), MAX_RETRY_DELAY_MS);
  }
  return Math.min(500 * 2 ** attempt, 8_000) * (0.75 + Math.random() / 2);
}

async function wait(ms: number, req: JsonPost): Promise<void> {
  try {
    await sleep(ms, undefined, req.signal === undefined ? {} : { signal: req.signal });
  } catch (err) {
    throw new RequestCancelledError(`The request to ${req.describe} was cancelled.`, { cause: err });
  }
}

function snippet(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 300 ? `${one.slice(0, 300)}...` : one === '' ? '(empty body)' : one;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** `baseURL` + `path`, with exactly one `/` between them and `query` appended. */
export function joinUrl(baseURL: string, path: string, query?: Readonly<Record<string, string>>): string {
  const url = new URL(`${baseURL.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
  return url.toString();
}

/** `scheme://host[:port]` of a URL, for messages: never a path, query or credentials. */
export function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
