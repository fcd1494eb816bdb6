// The MCP endpoint's bridge between Node's HTTP server and the SDK's handler (issue 41 part 4): a 2025-era request
// that asks for no progress is answered as plain JSON; one that asks for progress gets an event stream, sent as one
// body with its length when it is complete at once and as it comes when it streams; the bodies the handler must
// judge (not JSON, too large) get the handler's own answers. Raw HTTP against a real gateway on a loopback port,
// with the real echo fixture over stdio upstream.
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { MemoryAuditSink } from '../../src/security/audit.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { createFixtureLog, nodeFixture, waitUntil } from '../helpers/index.js';

const log = createFixtureLog();
const audit = new MemoryAuditSink();
let manager: MCPClientManager;
let gateway: Gateway;
let url: URL;

beforeAll(async () => {
  manager = new MCPClientManager({
    capabilities: CapabilitySet.fromPolicy({
      version: 1,
      rules: [
        { effect: 'allow', resource: 'mcp:echo:echo', actions: ['execute'] },
        { effect: 'allow', resource: 'mcp:echo:progress', actions: ['execute'] },
        { effect: 'allow', resource: 'mcp:echo:slow', actions: ['execute'] },
      ],
    }),
  });
  await manager.connectServer({
    name: 'echo',
    transport: 'stdio',
    ...nodeFixture('echo'),
    env: log.env,
  });
  gateway = new Gateway({ manager, audit, config: { http: { port: 0 } } });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
  await log.close();
});

const LEGACY = '2025-06-18';

function post(
  body: string | Uint8Array,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    ...(signal === undefined ? {} : { signal }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LEGACY,
      ...headers,
    },
    body,
  });
}

function call(id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  const params = { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
}

/** The JSON-RPC messages of an SSE body, in order. */
function events(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)) as Record<string, unknown>);
}

describe('the gateway answers a 2025-era request', () => {
  it('that asks for no progress: plain JSON with its length, no event stream', async () => {
    const response = await post(call(1, 'mcp__echo__echo', { text: 'hello' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const text = await response.text();
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'hello' }] },
    });
  });

  it('that asks for no progress and is refused: the JSON-RPC error, as JSON', async () => {
    const response = await post(call(5, 'mcp__echo__nope', {}));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32602 } });
  });

  it('that asks for progress and is complete at once: one SSE body with its length', async () => {
    const response = await post(call(6, 'mcp__echo__echo', { text: 'hi' }, { progressToken: 'q' }));
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const text = await response.text();
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(events(text)).toEqual([
      { jsonrpc: '2.0', id: 6, result: { content: [{ type: 'text', text: 'hi' }] } },
    ]);
  });

  it('that the endpoint answers itself: decided, audited and counted like any other call', async () => {
    const allowed = await post(call(10, 'mcp__echo__echo', { text: 'audited' }));
    expect(await allowed.json()).toMatchObject({ id: 10, result: { content: [{ text: 'audited' }] } });
    expect(audit.records.findLast((r) => r.resource === 'mcp:echo:echo')).toMatchObject({
      effect: 'allow',
      agent: 'gateway',
      principal: 'anonymous',
    });
    // `add` is not in the policy: hidden, so unknown to the caller, never sent, and the denial is audited.
    const hidden = await post(call(11, 'mcp__echo__add', { a: 1, b: 2 }));
    expect(await hidden.json()).toMatchObject({
      id: 11,
      error: { code: -32602, message: 'Unknown tool: mcp__echo__add' },
    });
    expect(log.toolCalls('add')).toHaveLength(0);
    expect(audit.records.findLast((r) => r.resource === 'mcp:echo:add')).toMatchObject({
      effect: 'default-deny',
    });
    const metrics = await gateway.metrics.render();
    expect(metrics).toMatch(/interlock_gateway_calls_total\{[^}]*tool="echo"[^}]*\} [1-9]/);
  });

  it('that is not well formed: the SDK judges it, and nothing reaches the server', async () => {
    const before = log.toolCalls('echo').length;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 12,
      method: 'tools/call',
      params: { name: 'mcp__echo__echo', arguments: ['not', 'an', 'object'] },
    });
    const answer = (await (await post(body)).json()) as { id: number; error?: { code: number } };
    expect(answer.id).toBe(12);
    expect(answer.error?.code).toBeTypeOf('number');
    expect(log.toolCalls('echo')).toHaveLength(before);
  });

  it('as the SDK would: a client that does not accept an event stream is refused (406)', async () => {
    const response = await post(call(7, 'mcp__echo__echo', { text: 'x' }), { accept: 'application/json' });
    expect(response.status).toBe(406);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('as the SDK would: a protocol version it does not serve is refused (400)', async () => {
    const response = await post(call(8, 'mcp__echo__echo', { text: 'x' }), {
      'mcp-protocol-version': '1999-01-01',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });

  it('and a client that goes away mid-call cancels the upstream call', async () => {
    const abort = new AbortController();
    const pending = post(call(9, 'mcp__echo__slow', { ms: 20_000 }), {}, abort.signal).catch((e) => e);
    await waitUntil(() => log.toolCalls('slow').length > 0, { message: 'the slow call never arrived' });
    abort.abort();
    await pending;
    await waitUntil(() => log.entries().some((e) => e.kind === 'event' && e.event === 'aborted'), {
      message: 'the upstream call was not cancelled',
    });
  });

  it('that streams: each progress event as it comes, before the answer exists', async () => {
    const response = await post(
      call(2, 'mcp__echo__progress', { steps: 2, intervalMs: 300 }, { progressToken: 'p' }),
    );
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    // Read until the first event is complete: it must be the first progress step, with no answer yet.
    while (!text.includes('\n\n')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
    const first = events(text);
    expect(first.map((m) => m.method ?? 'answer')).toEqual(['notifications/progress']);
    for (let next = await reader.read(); !next.done; next = await reader.read()) text += next.value;
    const all = events(text);
    expect(all.map((m) => m.method ?? 'answer')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'answer',
    ]);
    expect(all.at(-1)).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'done 2' }] } });
  });

  it('with a body that is not JSON: the parse error, as the handler gives it', async () => {
    const response = await post('{"jsonrpc": "2.0", "id": 3, "method": ');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('with a body over the size limit: 413, as the handler gives it', async () => {
    const text = 'x'.repeat(4 * 1024 * 1024 + 16);
    const response = await post(call(4, 'mcp__echo__echo', { text }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: -32000 } });
  });

  it('on connections kept open longer than a load balancer idles (65 s, not the 5 of Node)', async () => {
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      const agent = new Agent({ keepAlive: true });
      const req = httpRequest(new URL('/healthz', url), { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          agent.destroy();
          resolve(res.headers);
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(headers['keep-alive']).toBe('timeout=65');
  });

  it('that is a notification: accepted with no body', async () => {
    const response = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });
});
