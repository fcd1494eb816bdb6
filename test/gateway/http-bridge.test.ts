// The MCP endpoint's bridge between Node's HTTP server and the SDK's handler (issue 41 part 4): a 2025-era answer
// that is complete at once goes out as one body with its length; one that streams (progress) still streams; the
// bodies the handler must judge (not JSON, too large) get the handler's own answers. Raw HTTP against a real
// gateway on a loopback port, with the real echo fixture over stdio upstream.
import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from '../../src/gateway/gateway.js';
import { MCPClientManager } from '../../src/interop/manager.js';
import { CapabilitySet } from '../../src/security/capability-set.js';
import { nodeFixture } from '../helpers/index.js';

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
      ],
    }),
  });
  await manager.connectServer({ name: 'echo', transport: 'stdio', ...nodeFixture('echo') });
  gateway = new Gateway({ manager, config: { http: { port: 0 } } });
  ({ url } = await gateway.listen());
});

afterAll(async () => {
  await gateway?.close();
  await manager?.close();
});

const LEGACY = '2025-06-18';

function post(body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
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
  it('complete at once: one SSE body with its length, not a chunked stream', async () => {
    const response = await post(call(1, 'mcp__echo__echo', { text: 'hello' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const text = await response.text();
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(events(text)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hello' }] } },
    ]);
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
