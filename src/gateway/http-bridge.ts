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
 * - A 2025-era request that asks for no progress is answered as plain JSON (`application/json`), which the
 *   transport allows for any request. The SDK's stateless fallback always opens an event stream, which costs the
 *   gateway a stream per request and the client an SSE parse per answer; on that leg nothing can use the stream
 *   anyway: the per-request server never saw the client's `initialize`, so it knows no client capabilities and
 *   sends the client no request (the relay refuses an upstream's question it cannot ask), and a progress
 *   notification goes only to a request that carries a progress token, which keeps the stream.
 * - A plain 2025-era `tools/call` (one well-formed request with a protocol version header the SDK serves, no
 *   progress token, no task) is answered here, by the same call the SDK server's handler runs
 *   (`toolCaller`, server.ts): no server instance, transport and teardown per request, which were a third of
 *   the gateway's CPU per call. Every other request, and every request this leg does not find well formed, goes
 *   to the SDK, which validates it and gives its own answers.
 */
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import {
  type AuthInfo,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isJsonContentType,
  isLegacyRequest,
  type McpServerFactory,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { isJsonObject } from '../json.js';
import type { GatewayToolCall } from './server.js';

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

/** The handler's fetch, and the factory it serves from (for the 2025-era requests answered as JSON here). */
export interface McpEndpoint {
  fetch: McpFetch;
  factory: McpServerFactory;
  /** The caller's `tools/call`, for the plain 2025-era calls answered here; none: the SDK serves them too. */
  toolCall?: ((authInfo: AuthInfo | undefined) => GatewayToolCall) | undefined;
}

/** Calls `fetch` for one MCP request, with the body read and parsed here when it is a JSON POST. */
export async function fetchMcp(
  endpoint: McpEndpoint,
  request: Request,
  incoming: IncomingMessage | Http2ServerRequest,
  authInfo: AuthInfo | undefined,
): Promise<Response> {
  const { fetch } = endpoint;
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
  if (answersWithJson(parsedBody) && (await isLegacyRequest(request, parsedBody))) {
    const { toolCall } = endpoint;
    const call = toolCall === undefined ? undefined : plainToolCall(request, parsedBody);
    if (toolCall !== undefined && call !== undefined) return serveToolCall(toolCall(authInfo), request, call);
    return serveLegacyJson(endpoint.factory, request, parsedBody, authInfo);
  }
  return settleEventStream(await fetch(request, { ...auth, parsedBody }));
}

/** One JSON-RPC request (not a batch, not a notification) that asks for no progress notifications. */
function answersWithJson(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: unknown };
  if (typeof method !== 'string' || (typeof id !== 'string' && typeof id !== 'number')) return false;
  const meta = (params as { _meta?: unknown } | undefined)?._meta;
  return meta === undefined || (meta as { progressToken?: unknown }).progressToken === undefined;
}

/**
 * A 2025-era request served as the SDK's stateless fallback serves it (a fresh server instance on a fresh
 * session-less transport, torn down after the answer or when the client goes away), with a JSON answer.
 */
async function serveLegacyJson(
  factory: McpServerFactory,
  request: Request,
  parsedBody: unknown,
  authInfo: AuthInfo | undefined,
): Promise<Response> {
  const auth = authInfo === undefined ? {} : { authInfo };
  let server: Awaited<ReturnType<McpServerFactory>>;
  try {
    server = await factory({ era: 'legacy', ...auth, requestInfo: request });
  } catch {
    // As the SDK's fallback answers a factory that fails: an internal error, nothing of the failure itself.
    const id = (parsedBody as { id: string | number }).id;
    const error = { code: ProtocolErrorCode.InternalError, message: 'Internal server error' };
    return Response.json({ jsonrpc: '2.0', error, id }, { status: 500 });
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  const teardown = () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  };
  request.signal.addEventListener('abort', teardown, { once: true });
  try {
    return await transport.handleRequest(request, { ...auth, parsedBody });
  } finally {
    request.signal.removeEventListener('abort', teardown);
    teardown();
  }
}

/** A `tools/call` this leg answers itself: its id and params. */
interface PlainToolCall {
  id: string | number;
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
}

const LEGACY_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);
const CALL_PARAMS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);

/**
 * The call when the request is a plain, well-formed 2025-era `tools/call` the SDK would serve as it is: the
 * accept header and protocol version the SDK's transport requires, `params` with a name, object arguments and no
 * other key (a task-augmented call goes to the SDK), and no progress token (`answersWithJson`). Undefined
 * otherwise: the SDK serves it, and answers what is wrong with it.
 */
function plainToolCall(request: Request, body: unknown): PlainToolCall | undefined {
  const { jsonrpc, method, id, params } = body as Record<string, unknown>;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isJsonObject(params)) return undefined;
  const version = request.headers.get('mcp-protocol-version');
  if (version === null || !LEGACY_VERSIONS.has(version)) return undefined;
  const accept = request.headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isJsonObject(params.arguments)) return undefined;
  if (params._meta !== undefined && !isJsonObject(params._meta)) return undefined;
  for (const key of Object.keys(params)) if (!CALL_PARAMS.has(key)) return undefined;
  return { id: id as string | number, params: params as PlainToolCall['params'] };
}

/**
 * Answers a plain call as the SDK's JSON answer would be: the result, or the JSON-RPC error the call threw (an
 * unknown tool's `InvalidParams`); anything else is an internal error, with nothing of the failure. The client
 * going away cancels the call.
 */
async function serveToolCall(
  call: GatewayToolCall,
  request: Request,
  plain: PlainToolCall,
): Promise<Response> {
  const { id, params } = plain;
  try {
    // The request's signal is aborted when the client goes away: the call's own.
    const result = await call(params, { signal: request.signal, supports: () => false });
    return Response.json({ result, jsonrpc: '2.0', id });
  } catch (err) {
    const coded = err as { code?: unknown; message?: unknown; data?: unknown };
    const error =
      Number.isSafeInteger(coded.code) && typeof coded.message === 'string'
        ? {
            // As the SDK's 2025-era codec sends it: the 2026 "resource not found" code as invalid params.
            code: coded.code === -32002 ? ProtocolErrorCode.InvalidParams : (coded.code as number),
            message: coded.message,
            ...(coded.data === undefined ? {} : { data: coded.data }),
          }
        : { code: ProtocolErrorCode.InternalError, message: 'Internal error' };
    return Response.json({ jsonrpc: '2.0', id, error });
  }
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
