/**
 * One hop of a request on the wire (issue 43: split from http.ts): a body of text, form parameters or bytes through
 * undici's `request()`, anything else through undici's fetch, the answer as Node's global `Response`. Redirects,
 * the guard and secret masking are the caller's (http.ts).
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Response as UndiciResponse } from 'undici';
import { bufferedResponse } from './buffered-response.js';
import { heldWhileUsedSignal, requestSignal } from './signals.js';

const load = createRequire(import.meta.url);
let undiciModule: typeof import('undici') | undefined;
/**
 * undici, loaded when the first dispatcher is made or the first request sent: it is the largest module behind the
 * interop entry, and apps with stdio servers alone never need it (issue 15, import time).
 */
export function undici(): typeof import('undici') {
  undiciModule ??= load('undici') as typeof import('undici');
  return undiciModule;
}

/** Statuses whose responses have no body (Fetch standard, "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * An error answer of undici as one of Node's global `Response` class: the npm undici and the copy inside Node are
 * different classes, and the MCP SDK tells an OAuth error answer from a string with `instanceof Response`
 * (otherwise it reads "[object Response]" instead of the error, and skips its recovery from `invalid_client` /
 * `invalid_grant`). Successful answers are passed as they are: re-wrapping their body stream cost about 0.3 ms
 * per call (measured with `npm run bench`), and the SDK only needs the class on error answers.
 */
function asGlobalResponse(response: UndiciResponse, url: URL): Response {
  if (response.ok) return response as unknown as Response;
  const { status, statusText, headers } = response;
  const body = NULL_BODY_STATUSES.has(status) ? null : (response.body as ReadableStream<Uint8Array> | null);
  const out = new Response(body, { status, statusText, headers: headers as unknown as Headers });
  Object.defineProperty(out, 'url', { value: url.href });
  return out;
}

let statusTextsOf: Record<number, string | undefined> | undefined;
/** The reason phrases of HTTP statuses, loaded with the first answer (`node:http` is not needed before). */
function statusTexts(): Record<number, string | undefined> {
  statusTextsOf ??= (load('node:http') as typeof import('node:http')).STATUS_CODES;
  return statusTextsOf;
}

/** A request body `request()` takes as it is, with the content type fetch would give it; undefined: another kind. */
function plainBody(
  body: RequestInit['body'],
): { body: string | Uint8Array | null; type: string | undefined } | undefined {
  if (body === undefined || body === null) return { body: null, type: undefined };
  if (typeof body === 'string') return { body, type: 'text/plain;charset=UTF-8' };
  if (body instanceof URLSearchParams)
    return { body: body.toString(), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  if (body instanceof Uint8Array) return { body, type: undefined };
  if (body instanceof ArrayBuffer) return { body: new Uint8Array(body), type: undefined };
  return undefined;
}

/**
 * One hop of a request as Node's global `Response`. A body of text, form parameters or bytes (every request of the
 * MCP transports and the OAuth endpoints) goes through undici's `request()` on `dispatcher`: the fetch algorithm on
 * top of it (a Request object, a clone of each request teed into two body streams) was some 40% of the client CPU
 * of a tool call over HTTP (issue 15).
 * Any other body (a stream, a blob, form data) takes undici's fetch, redirects left to the caller either way.
 */
export async function send(dispatcher: Dispatcher, target: URL, init: RequestInit): Promise<Response> {
  const plain = plainBody(init.body);
  if (plain === undefined) {
    // Its own signal per request: the SDK passes one signal to every request, and fetch lets go of its listener
    // only when the request is collected (see signals.ts).
    const signal = init.signal ? heldWhileUsedSignal(init.signal) : init.signal;
    const response = await undici().fetch(target, {
      ...(init as object),
      signal,
      redirect: 'manual',
      dispatcher,
    });
    return asGlobalResponse(response, target);
  }
  const method = (init.method ?? 'GET').toUpperCase();
  const headers: string[] = [];
  let accept = false;
  let agent = false;
  let type = false;
  for (const [name, value] of headerEntries(init.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'accept') accept = true;
    else if (lower === 'user-agent') agent = true;
    else if (lower === 'content-type') type = true;
    headers.push(name, value);
  }
  // What fetch adds when the caller did not: servers may insist on an Accept and a User-Agent.
  if (!accept) headers.push('accept', '*/*');
  if (!agent) headers.push('user-agent', 'node');
  if (!type && plain.type !== undefined) headers.push('content-type', plain.type);
  // `request()` listens on the signal until the answer's body is closed: a signal of its own per request keeps the
  // caller's shared one at one listener however many requests are in flight (see signals.ts).
  const follow = init.signal ? requestSignal(init.signal) : undefined;
  let answer: Dispatcher.ResponseData;
  try {
    answer = await undici().request(target, {
      method: method as Dispatcher.HttpMethod,
      headers,
      body: plain.body,
      signal: follow?.signal,
      dispatcher,
    });
  } catch (err) {
    follow?.dispose();
    // As fetch rejects: the abort reason when aborted, else a TypeError whose cause says what failed.
    if (init.signal?.aborted) throw init.signal.reason;
    throw new TypeError('fetch failed', { cause: err });
  }
  if (follow !== undefined) answer.body.once('close', follow.dispose);
  const { statusCode: status } = answer;
  if (status < 200 || status > 599) {
    discard(answer.body);
    throw new TypeError('fetch failed', {
      cause: new Error(`${target.origin} answered with HTTP status ${status}, outside 200 to 599.`),
    });
  }
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const one of value) responseHeaders.append(name, one);
    else if (value !== undefined) responseHeaders.append(name, value);
  }
  const empty = NULL_BODY_STATUSES.has(status) || method === 'HEAD';
  const responseInit = { status, statusText: statusTexts()[status] ?? '', headers: responseHeaders };
  if (empty) answer.body.dump().catch(() => {});
  else if (readWhole(answer.headers)) {
    let bytes: Uint8Array;
    try {
      bytes = await answer.body.bytes();
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason;
      throw new TypeError('fetch failed', { cause: err });
    }
    return bufferedResponse(bytes, responseInit, target.href);
  }
  const out = new Response(
    empty ? null : (answer.body as unknown as ReadableStream<Uint8Array>),
    responseInit,
  );
  Object.defineProperty(out, 'url', { value: target.href });
  // A body nobody reads would hold its pooled socket and its abort listener for good: let go of it once the
  // answer is collected unread, as fetch does (a body stream still being read, an SSE stream, is left alone).
  if (out.body !== null) unreadBodies.register(out, { socket: answer.body, stream: new WeakRef(out.body) });
  return out;
}

/**
 * Whether an answer's body is read whole before fetch resolves (see buffered-response.ts): a JSON document, which
 * nobody can use before its end anyway, or an empty body. Event streams and everything else stay streams.
 */
function readWhole(headers: Dispatcher.ResponseData['headers']): boolean {
  if (headers['content-length'] === '0') return true;
  const type = headers['content-type'];
  if (typeof type !== 'string') return false;
  const semicolon = type.indexOf(';');
  const essence = (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase();
  return essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'));
}

/** Destroys the socket stream of an answer collected before anyone started to read its body. */
const unreadBodies = new FinalizationRegistry<{
  socket: Dispatcher.ResponseData['body'];
  stream: WeakRef<ReadableStream<Uint8Array>>;
}>(({ socket, stream }) => {
  if (stream.deref()?.locked !== true) discard(socket);
});

/**
 * Closes an answer's body unread, and its socket with it. Destroyed unread, the body emits an abort error that
 * nobody is left to hear: it gets a listener first.
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  if (!body.destroyed) body.on('error', noop).destroy();
}

/** The headers of a request as `[name, value]` pairs, whatever form `RequestInit.headers` took. */
export function headerEntries(headers: RequestInit['headers']): Iterable<readonly [string, string]> {
  if (headers === undefined || headers === null) return [];
  if (headers instanceof Headers) return headers.entries();
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  return pairs.map(([k, v]) => [String(k), Array.isArray(v) ? v.join(', ') : String(v)] as const);
}

function noop(): void {}
