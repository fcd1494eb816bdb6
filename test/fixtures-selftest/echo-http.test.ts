import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  connectHttpClient,
  createFixtureLog,
  isAlive,
  startHttpFixture,
  waitForExit,
  waitUntil,
} from '../helpers/index.js';

const echoText = { name: 'echo', arguments: { text: 'over http' } };
const echoed = { content: [{ type: 'text', text: 'over http' }] };

describe('echo fixture over HTTP', () => {
  it('serves Streamable HTTP at /mcp with sessions, JSON-RPC errors and a request log', async () => {
    await using log = createFixtureLog();
    await using server = await startHttpFixture({ transport: 'http', env: log.env });
    expect(server.endpoint).toBe(server.mcpUrl);
    await using h = await connectHttpClient(server.mcpUrl, 'streamable');
    expect(await h.client.callTool(echoText)).toEqual(echoed);
    await expect(h.client.callTool({ name: 'throw', arguments: {} })).rejects.toMatchObject({ code: -32603 });
    expect((await fetch(server.sseUrl)).status).toBe(404);
    expect(log.toolCalls('echo')).toHaveLength(1);
    const unknownSession = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-session-id': 'nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unknownSession.status).toBe(404);
  });

  it('serves legacy SSE, answers POST /mcp with 405 and lets a client fall back at /mcp', async () => {
    await using server = await startHttpFixture({ transport: 'sse' });
    expect(server.endpoint).toBe(server.sseUrl);
    await using direct = await connectHttpClient(server.sseUrl, 'sse');
    expect(await direct.client.callTool(echoText)).toEqual(echoed);

    // The fallback the spec describes: try Streamable HTTP, on a 4xx use SSE at the same URL.
    const first = new Client({ name: 'fallback', version: '0' });
    await expect(
      first.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl))),
    ).rejects.toMatchObject({
      code: 405,
    });
    await first.close();
    const second = new Client({ name: 'fallback', version: '0' });
    await second.connect(new SSEClientTransport(new URL(server.mcpUrl)));
    expect(await second.callTool(echoText)).toEqual(echoed);
    await second.close();
  });

  it('serves both transports in one process and tells every session when tools change', async () => {
    await using server = await startHttpFixture({ transport: 'both' });
    await using streamable = await connectHttpClient(server.mcpUrl, 'streamable');
    await using sse = await connectHttpClient(server.sseUrl, 'sse');
    let sseChanges = 0;
    sse.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      sseChanges++;
    });
    await streamable.client.callTool({ name: 'add_tool', arguments: { name: 'shared' } });
    await waitUntil(() => sseChanges === 1);
    const { tools } = await sse.client.listTools();
    expect(tools.some((t) => t.name === 'shared')).toBe(true);
  });

  it('close() stops the process cleanly (exit 0) and is safe to call twice', async () => {
    const server = await startHttpFixture({ transport: 'http' });
    expect(isAlive(server.pid)).toBe(true);
    await server.close();
    await server.close();
    expect(await waitForExit(server.pid, 5_000)).toBe(true);
    expect(server.child.exitCode).toBe(0);
  });

  it('fails to start with an error that quotes the fixture stderr', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      await expect(startHttpFixture({ transport: 'http', port })).rejects.toThrow(
        /did not start[\s\S]*EADDRINUSE/,
      );
    } finally {
      blocker.close();
    }
  });
});
