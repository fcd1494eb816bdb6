/**
 * Issue 15: SDK errors are classified once, by their classes, codes, HTTP status and cause chain. Each kind is
 * witnessed by the error a real SDK transport produces: a loopback HTTP server that answers 404, 401, 429, 503
 * or 500, an SSE server that refuses a POST, a port nobody listens on, a stdio child that is killed mid-call.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client,
  type JSONRPCMessage,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { mapRequestError } from '../../src/interop/request-errors.js';
import {
  classifySdkError,
  httpStatusOf,
  isFatalStreamError,
  neverReachedServer,
  sessionGone,
} from '../../src/interop/sdk-errors.js';
import { ProcessStdioTransport } from '../../src/protocol/stdio-transport.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/net.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<string> {
  const server: Server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What `promise` rejects with; fails the test when it resolves (every case here expects a failure). */
function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

const REQUEST: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

/** What a Streamable HTTP transport throws when the server answers `status` to a POST. */
async function streamableRejection(status: number): Promise<unknown> {
  const base = await serve((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`);
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
  transport.onerror = () => {};
  cleanup.push(() => transport.close());
  await transport.start();
  return rejection(transport.send(REQUEST));
}

describe('classifySdkError over Streamable HTTP', () => {
  it('reads HTTP 404 for the session as session_gone, which never reached the server', async () => {
    const err = await streamableRejection(404);
    expect(classifySdkError(err)).toMatchObject({ kind: 'session_gone', status: 404 });
    expect(sessionGone(err)).toBe(true);
    expect(neverReachedServer(err)).toBe(true);
  });

  it('reads 429 and 503 as overloaded, and the call maps to SERVER_ERROR with the status and advice', async () => {
    for (const status of [429, 503]) {
      const err = await streamableRejection(status);
      expect(classifySdkError(err)).toMatchObject({ kind: 'overloaded', status });
      expect(neverReachedServer(err)).toBe(false);
      const mapped = mapRequestError(err, {
        server: 's',
        what: "tool 'x'",
        timeoutMs: 1000,
        signal: undefined,
      });
      expect(mapped).toMatchObject({ code: 'SERVER_ERROR', data: { httpStatus: status } });
      expect(mapped.message).toContain('call again later');
    }
  });

  it('reads 401 without an auth provider as auth_required and 500 as http_error', async () => {
    expect(classifySdkError(await streamableRejection(401))).toMatchObject({
      kind: 'auth_required',
      status: 401,
    });
    const err = await streamableRejection(500);
    expect(classifySdkError(err)).toMatchObject({ kind: 'http_error', status: 500 });
    expect(sessionGone(err)).toBe(false);
  });

  it('reads a refused TCP connection as connect_refused from the cause chain, which never reached the server', async () => {
    const port = await freePort();
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    transport.onerror = () => {};
    cleanup.push(() => transport.close());
    await transport.start();
    const err = await rejection(transport.send(REQUEST));
    expect(classifySdkError(err)).toMatchObject({ kind: 'connect_refused', systemCode: 'ECONNREFUSED' });
    expect(neverReachedServer(err)).toBe(true);
  });

  it('reads a GET stream that ends with no retries left as stream_lost, which is fatal for the connection', async () => {
    const base = await serve((req, res) => {
      req.resume();
      if (req.method === 'POST') return void res.writeHead(202).end();
      // The GET stream: one priming event, then the server ends it.
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: 1\ndata: \n\n');
    });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1,
        maxReconnectionDelay: 1,
        reconnectionDelayGrowFactor: 1,
      },
    });
    const reported = new Promise<Error>((resolve) => {
      transport.onerror = resolve;
    });
    cleanup.push(() => transport.close());
    await transport.start();
    // After `notifications/initialized` is accepted (202), the transport opens its GET stream.
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const err = await reported;
    expect(classifySdkError(err).kind).toBe('stream_lost');
    expect(isFatalStreamError(err)).toBe(true);
  });
});

describe('classifySdkError over legacy SSE', () => {
  it('reads the status out of a refused POST (the SDK gives only a message) as session_gone for 404', async () => {
    const base = await serve((req, res) => {
      req.resume();
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: endpoint\ndata: /messages?sessionId=abc\n\n');
        return;
      }
      res.writeHead(404).end('unknown session');
    });
    const transport = new SSEClientTransport(new URL(`${base}/sse`));
    transport.onerror = () => {};
    cleanup.push(() => transport.close());
    await transport.start();
    const err = await rejection(transport.send(REQUEST));
    expect(httpStatusOf(err)).toBe(404);
    expect(classifySdkError(err).kind).toBe('session_gone');
    expect(isFatalStreamError(err)).toBe(true);
    expect(neverReachedServer(err)).toBe(true);
  });
});

describe('classifySdkError over stdio', () => {
  /** The SDK-built echo fixture: its `slow` tool with a long `ms` answers only when cancelled. */
  async function connectEcho(): Promise<{ client: Client; transport: StdioClientTransport }> {
    const transport = new StdioClientTransport({ ...nodeFixture('echo'), stderr: 'ignore' });
    const client = new Client({ name: 'sdk-errors-test', version: '0.0.0' }, { capabilities: {} });
    cleanup.push(() => client.close());
    await client.connect(transport);
    return { client, transport };
  }

  it('reads a pending request whose server is killed as connection_lost, which may have reached it', async () => {
    const { client, transport } = await connectEcho();
    const pending = rejection(client.callTool({ name: 'slow', arguments: { ms: 600_000 } }));
    // The request is written before the child is killed: once `ping` answers, `slow` is on the server too.
    await client.ping();
    process.kill(transport.pid as number, 'SIGKILL');
    const err = await pending;
    expect(classifySdkError(err).kind).toBe('connection_lost');
    expect(neverReachedServer(err)).toBe(false);
    expect(
      mapRequestError(err, { server: 's', what: "tool 'slow'", timeoutMs: 0, signal: undefined }).code,
    ).toBe('CONNECTION_LOST');
  });

  it('reads the SDK timeout as timeout, an aborted request as cancelled, and a JSON-RPC error as server_error', async () => {
    const { client } = await connectEcho();
    const timedOut = await rejection(
      client.callTool({ name: 'slow', arguments: { ms: 600_000 } }, { timeout: 20 }),
    );
    expect(classifySdkError(timedOut).kind).toBe('timeout');

    const controller = new AbortController();
    const aborted = rejection(
      client.callTool({ name: 'slow', arguments: { ms: 600_000 } }, { signal: controller.signal }),
    );
    controller.abort();
    expect(classifySdkError(await aborted).kind).toBe('cancelled');

    // The SDK-built fixture answers a call of a tool it does not have with a JSON-RPC error.
    const refused = await rejection(client.callTool({ name: 'no_such_tool', arguments: {} }));
    expect(classifySdkError(refused).kind).toBe('server_error');
  });

  it('reads a send on an exited ProcessStdioTransport as not_connected, which never reached the server', async () => {
    const transport = new ProcessStdioTransport({ ...nodeFixture('faulty'), env: {} });
    cleanup.push(() => transport.close());
    await transport.start();
    await transport.close();
    const err = await rejection(transport.send(REQUEST));
    expect(classifySdkError(err).kind).toBe('not_connected');
    expect(neverReachedServer(err)).toBe(true);
  });

  it('finds ENOENT for a command that does not exist, and the connect error says to check PATH', async () => {
    const manager = new MCPClientManager({ capabilities: CapabilitySet.allowAll({ onWarning: () => {} }) });
    cleanup.push(() => manager.close());
    const err = await rejection(
      manager.connectServer({
        name: 'nope',
        transport: 'stdio',
        command: 'interlock-no-such-command',
        args: [],
      }),
    );
    expect(classifySdkError((err as Error).cause).systemCode).toBe('ENOENT');
    expect(err).toMatchObject({ code: 'CONNECTION_FAILED' });
    expect((err as Error).message).toContain("Is 'interlock-no-such-command' installed and on PATH?");
  });

  it('reads a request on a client with no transport as not_connected', async () => {
    const client = new Client({ name: 'sdk-errors-test', version: '0.0.0' }, { capabilities: {} });
    const err = await rejection(client.request({ method: 'ping' }));
    expect(classifySdkError(err).kind).toBe('not_connected');
    expect(neverReachedServer(err)).toBe(true);
  });
});

describe('classifySdkError on anything else', () => {
  it('reads the SDK UnauthorizedError (no code, no status) as auth_required', () => {
    expect(classifySdkError(new UnauthorizedError()).kind).toBe('auth_required');
  });

  it('does not mistake plain errors or non-errors for a known kind', () => {
    expect(classifySdkError(new Error('HTTP 404 somewhere in a message')).kind).toBe('unknown');
    expect(classifySdkError('a string').kind).toBe('unknown');
    expect(classifySdkError(undefined).kind).toBe('unknown');
    expect(sessionGone(new Error('Server said (HTTP 404)'))).toBe(false);
  });

  it('finds a system code nested in causes and aggregate errors, and stops at a cause cycle', () => {
    const inner = Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' });
    const fetchFailed = new TypeError('fetch failed', { cause: new AggregateError([inner], 'all failed') });
    expect(classifySdkError(fetchFailed)).toMatchObject({
      kind: 'connection_lost',
      systemCode: 'ECONNRESET',
    });
    const cyclic = new Error('loop') as Error & { cause?: unknown };
    cyclic.cause = cyclic;
    expect(classifySdkError(cyclic).kind).toBe('unknown');
  });
});
