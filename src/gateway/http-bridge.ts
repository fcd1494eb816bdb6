/**
 * The MCP endpoint's leg between Node's HTTP server and the SDK's web-standard handler (issue 41 part 4), where
 * the gateway's per-request overhead was. A CPU profile of `interlock serve --http` under load spent the most
 * self time in socket writes, then in web streams (the request body teed by `Request.clone()`, the answer's
 * stream). Two things are done here instead:
 *
 * - The JSON body of a POST is read from Node's stream and parsed once, and given to the handler as
 *   `parsedBody`: the handler then neither clones the request nor reads its body through a web stream. Bodies
 *   the handler must judge itself (not JSON, empty, over its size limit) go to it as raw bytes, unchanged.
 * - An SSE answer (what a 2025-era client gets for every request) whose stream ends within the same turn of the
 *   event loop as its last event is sent as one body with its length: one socket write instead of three
 *   (headers, event, end of the chunked body). A stream that stays open (a question relayed to the client,
 *   progress, a long call) is sent as it comes, once its first event is there; the SDK's keep-alive comments
 *   bound how long that waits.
 */
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import {
  type AuthInfo,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isJsonContentType,
} from '@modelcontextprotocol/server';

/**
 * How long an idle client connection stays open: longer than the idle timeout of the usual load balancers (60 s),
 * so that the gateway never closes a kept-alive connection under a balancer or client just as it sends a request
 * on it (Node's default, 5 s, made the bench's client meet ECONNRESET on a loaded machine).
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Sets the listener's keep-alive timeout (and the headers timeout above it, as Node requires). */
export function keepConnections(server: { keepAliveTimeout: number; headersTimeout: number }): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = Math.max(server.headersTimeout, KEEP_ALIVE_TIMEOUT_MS + 1000);
}

/** The handler's fetch face (`createMcpHandler(...).fetch`). */
type McpFetch = (
  request: Request,
  options?: { authInfo?: AuthInfo; parsedBody?: unknown },
) => Promise<Response>;

/** Calls `fetch` for one MCP request, with the body read and parsed here when it is a JSON POST. */
export async function fetchMcp(
  fetch: McpFetch,
  request: Request,
  incoming: IncomingMessage | Http2ServerRequest,
  authInfo: AuthInfo | undefined,
): Promise<Response> {
  const auth = authInfo === undefined ? {} : { authInfo };
  if (request.method !== 'POST' || !isJsonContentType(request.headers.get('content-type'))) {
    return settleEventStream(await fetch(request, auth));
  }
  const raw = await readBody(incoming, DEFAULT_MAX_REQUEST_BODY_SIZE);
  let parsedBody: unknown;
  if (raw.length > 0 && raw.length <= DEFAULT_MAX_REQUEST_BODY_SIZE) {
    try {
      parsedBody = JSON.parse(raw.toString('utf8'));
    } catch {
      parsedBody = undefined;
    }
  }
  if (parsedBody === undefined) {
    // The handler answers these (parse error, too large, ...): it gets the bytes as they came.
    const copy = new Request(request.url, { method: 'POST', headers: request.headers, body: raw });
    return settleEventStream(await fetch(copy, auth));
  }
  return settleEventStream(await fetch(request, { ...auth, parsedBody }));
}

/** The request body, read up to one byte past `limit` (enough for the handler to refuse it as too large). */
async function readBody(incoming: IncomingMessage | Http2ServerRequest, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) break;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/**
 * An SSE answer whose stream ends in the same turn of the event loop as its last event, as one body (the same
 * bytes, with a length); any other answer as it is. It waits for the first event: the headers go with it.
 */
async function settleEventStream(response: Response): Promise<Response> {
  const body = response.body;
  if (body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return response;
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let pending = reader.read();
  for (;;) {
    const next = chunks.length === 0 ? await pending : await Promise.race([pending, nextTurn()]);
    if (next === TURN) break;
    if (next.done)
      return new Response(concat(chunks), { status: response.status, headers: response.headers });
    chunks.push(next.value);
    pending = reader.read();
  }
  // Still open after a turn: the events so far, then the rest as it comes.
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
    },
    async pull(controller) {
      const next = await pending;
      if (next.done) {
        controller.close();
        return;
      }
      controller.enqueue(next.value);
      pending = reader.read();
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(stream, { status: response.status, headers: response.headers });
}

const TURN = Symbol('turn');

function nextTurn(): Promise<typeof TURN> {
  return new Promise((resolve) => setImmediate(resolve, TURN));
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  return Buffer.concat(chunks);
}
