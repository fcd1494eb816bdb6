// Which leg of the MCP endpoint answers a request (issue 41 part 4): a plain, well-formed 2025-era tools/call is
// answered by the gateway's own call, with no SDK server instance; everything else goes to the SDK (its stateless
// JSON leg, or its handler). The endpoint here is made of recording parts, so each test sees which leg ran;
// http-bridge.test.ts checks the same answers end to end against a real gateway.
import { Readable } from 'node:stream';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { fetchMcp, type McpEndpoint } from '../../src/gateway/http-bridge.js';
import type { ToolCallRequest } from '../../src/gateway/server.js';

interface Legs {
  endpoint: McpEndpoint;
  direct: { params: unknown; request: ToolCallRequest }[];
  sdkServers: number;
  sdkHandler: number;
}

function legs(answer: (params: unknown, request: ToolCallRequest) => Promise<unknown>): Legs {
  const seen: Legs = {
    direct: [],
    sdkServers: 0,
    sdkHandler: 0,
    endpoint: {
      fetch: async () => {
        seen.sdkHandler++;
        return new Response('the SDK handler', { status: 299 });
      },
      factory: () => {
        seen.sdkServers++;
        throw new Error('no server here');
      },
      toolCall: () => async (params, request) => {
        seen.direct.push({ params, request });
        return (await answer(params, request)) as never;
      },
    },
  };
  return seen;
}

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

function send(
  seen: Legs,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  const text = JSON.stringify(body);
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: { ...HEADERS, ...headers },
    body: text,
    ...(signal === undefined ? {} : { signal }),
  });
  const incoming = Readable.from([Buffer.from(text)]) as never;
  return fetchMcp(seen.endpoint, request, incoming, undefined);
}

const echo = async () => ({ content: [{ type: 'text', text: 'direct' }] });

function toolCall(params: Record<string, unknown>, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params };
}

describe('the MCP endpoint', () => {
  it('answers a plain 2025-era tools/call with the gateway call, and makes no SDK server for it', async () => {
    const seen = legs(echo);
    const response = await send(seen, toolCall({ name: 't', arguments: { a: 1 } }, 'x1'));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      jsonrpc: '2.0',
      id: 'x1',
      result: { content: [{ type: 'text', text: 'direct' }] },
    });
    expect(seen.direct.map((d) => d.params)).toEqual([{ name: 't', arguments: { a: 1 } }]);
    // The client could not declare capabilities on this leg: nothing is relayed to it.
    expect(seen.direct[0]?.request.supports('elicitation.form')).toBe(false);
    expect(seen.sdkServers + seen.sdkHandler).toBe(0);
  });

  it.each([
    [
      'a progress token (its answer streams)',
      toolCall({ name: 't', _meta: { progressToken: 1 } }),
      {},
      'handler',
    ],
    ['a task (the SDK serves tasks)', toolCall({ name: 't', task: { ttl: 1000 } }), {}, 'server'],
    ['arguments that are not an object', toolCall({ name: 't', arguments: [1] }), {}, 'server'],
    ['no tool name', toolCall({ arguments: {} }), {}, 'server'],
    ['no protocol version header', toolCall({ name: 't' }), { 'mcp-protocol-version': '' }, 'server'],
    [
      'an accept header without event streams',
      toolCall({ name: 't' }),
      { accept: 'application/json' },
      'server',
    ],
    ['another method', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, {}, 'server'],
    ['a batch', [toolCall({ name: 't' })], {}, 'handler'],
  ])('leaves a call with %s to the SDK', async (_what, body, headers, leg) => {
    const seen = legs(echo);
    await send(seen, body, headers);
    expect(seen.direct).toHaveLength(0);
    expect(leg === 'server' ? seen.sdkServers : seen.sdkHandler).toBe(1);
  });

  it('answers a JSON-RPC error the call throws with its code and message', async () => {
    const seen = legs(async () => {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Unknown tool: t');
    });
    expect(await (await send(seen, toolCall({ name: 't' }), {}, undefined)).json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'Unknown tool: t' },
    });
  });

  it('answers any other failure as an internal error, with nothing of the failure itself', async () => {
    const seen = legs(async () => {
      throw new Error('secret detail at /srv/token');
    });
    const text = await (await send(seen, toolCall({ name: 't' }))).text();
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32603, message: 'Internal error' },
    });
    expect(text).not.toContain('secret');
  });

  it('cancels the call when the client goes away', async () => {
    const abort = new AbortController();
    const seen = legs(
      (_params, request) =>
        new Promise((_resolve, reject) => {
          request.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
          abort.abort();
        }),
    );
    await send(seen, toolCall({ name: 't' }), {}, abort.signal);
    expect(seen.direct[0]?.request.signal.aborted).toBe(true);
  });
});
