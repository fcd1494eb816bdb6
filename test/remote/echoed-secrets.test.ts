/**
 * Issue 14, item 8: text that comes from a server (an HTTP error body, a JSON-RPC error message, a stderr line) can
 * echo a secret we sent; it is masked before it reaches an error, its causes, an event or a log line.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { MCPClientManager } from '../../src/interop/manager.js';
import { createHttpClient } from '../../src/net/http.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { closesAfterEach } from './cleanup.js';
import { startHttp } from './net-fixtures.js';

const track = closesAfterEach();
const TOKEN = 'tok_live_9f8e7d6c5b4a39281706';
const API_KEY = 'key_0a1b2c3d4e5f60718293';

/** Everything an error exposes: message, stack and every cause's, as one string. */
function chainText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e !== undefined && depth < 20; depth++) {
    if (e instanceof Error) {
      parts.push(e.message, String(e.stack), JSON.stringify(e));
      e = e.cause;
    } else {
      parts.push(String(e));
      break;
    }
  }
  return parts.join('\n');
}

/** Answers 500 with a page that repeats every request header. */
function echoHeaders500(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  res
    .writeHead(500, { 'content-type': 'text/plain' })
    .end(`Internal error. Request headers were: ${JSON.stringify(req.headers)}`);
}

/** A minimal Streamable HTTP MCP server (JSON answers) whose tools/call error quotes the request headers. */
function echoingMcp(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.on('data', (c: Buffer) => {
    body += c.toString('utf8');
  });
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const msg = JSON.parse(body) as { id?: number; method: string };
    if (msg.id === undefined) return void res.writeHead(202).end();
    const result =
      msg.method === 'initialize'
        ? {
            protocolVersion: '2025-06-18',
            capabilities: { tools: {} },
            serverInfo: { name: 'echoing', version: '1' },
          }
        : msg.method === 'tools/list'
          ? { tools: [{ name: 'leak', inputSchema: { type: 'object' } }] }
          : undefined;
    const answer =
      result !== undefined
        ? { jsonrpc: '2.0', id: msg.id, result }
        : {
            jsonrpc: '2.0',
            id: msg.id,
            error: { code: -32603, message: `Denied for ${String(req.headers.authorization)}` },
          };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
}

describe('secrets echoed by servers are masked', () => {
  it('an HTTP error body repeating the Authorization header reaches the reader masked', async () => {
    const server = track(await startHttp(echoHeaders500));
    const http = track(createHttpClient({ network: { allowHosts: ['127.0.0.1'] }, http: { proxy: 'none' } }));
    const res = await http.fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'x-api-key': API_KEY },
      body: '{}',
    });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).toContain('Request headers were');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(API_KEY);
    expect(text).toContain('***');
  });

  it('a connect that fails with such a 500 leaks the token into no error, event or log', async () => {
    const server = track(await startHttp(echoHeaders500));
    const logs: string[] = [];
    const log = (message: string) => logs.push(message);
    const manager = track(
      new MCPClientManager({
        capabilities: new CapabilitySet(),
        network: { allowHosts: ['127.0.0.1'] },
        http: { proxy: 'none' },
        logger: { debug: log, info: log, warn: log, error: log },
      }),
    );
    const events: unknown[] = [];
    manager.on('failed', (e) => events.push(e));
    manager.on('connect_failed' as never, (e: unknown) => events.push(e));
    const err = await manager
      .connectServer({
        name: 'leaky',
        transport: 'http',
        url: `${server.url}/mcp`,
        headers: { Authorization: `Bearer ${TOKEN}` },
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const everything = [chainText(err), ...logs, ...events.map(chainText)].join('\n');
    expect(everything).toContain('500');
    expect(everything).not.toContain(TOKEN);
  });

  it('a JSON-RPC error message quoting the bearer token is masked in the error and its causes', async () => {
    const server = track(await startHttp(echoingMcp));
    const caps = new CapabilitySet();
    caps.grant('mcp:echoing:leak', 'execute');
    const manager = track(
      new MCPClientManager({
        capabilities: caps,
        network: { allowHosts: ['127.0.0.1'] },
        http: { proxy: 'none' },
      }),
    );
    const failures: unknown[] = [];
    manager.on('tool_call_failed', (e) => failures.push(e.error));
    await manager.connectServer({
      name: 'echoing',
      transport: 'http',
      url: `${server.url}/mcp`,
      headers: { 'X-Request-Source': 'test', Authorization: `Bearer ${TOKEN}` },
    });
    const err = await manager.executeTool('mcp__echoing__leak', {}).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SERVER_ERROR' });
    expect((err as Error).message).toMatch(/Denied for (Bearer )?\*\*\*/);
    expect(chainText(err)).not.toContain(TOKEN);
    expect(failures.map(chainText).join('\n')).not.toContain(TOKEN);
  });

  it("a stdio server's stderr echoing a secret env value is masked in the connect error", async () => {
    const manager = track(new MCPClientManager({ capabilities: new CapabilitySet() }));
    const err = await manager
      .connectServer({
        name: 'noisy',
        transport: 'stdio',
        command: process.execPath,
        args: ['-e', 'console.error("starting with key " + process.env.API_TOKEN); process.exit(1)'],
        env: { API_TOKEN: API_KEY },
        reconnect: { enabled: false },
      })
      .catch((e: unknown) => e);
    expect(chainText(err)).toContain('starting with key ***');
    expect(chainText(err)).not.toContain(API_KEY);
  });
});
