import { describe, expect, it } from 'vitest';
import { connectHttpClient, startEverything, waitForExit } from '../helpers/index.js';

describe('server-everything helper', () => {
  it.each([
    ['streamableHttp', 'streamable', '/mcp'],
    ['sse', 'sse', '/sse'],
  ] as const)('starts it in %s mode on loopback and a client can call echo', async (mode, kind, path) => {
    const server = await startEverything(mode);
    try {
      expect(server.endpoint).toBe(`${server.url}${path}`);
      await using h = await connectHttpClient(server.endpoint, kind);
      const result = await h.client.callTool({ name: 'echo', arguments: { message: 'hi' } });
      expect(JSON.stringify(result.content)).toContain('hi');
    } finally {
      await server.close();
    }
    expect(await waitForExit(server.pid, 5_000)).toBe(true);
  });
});
